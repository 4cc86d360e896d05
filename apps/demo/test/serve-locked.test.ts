import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { StoragePanel } from "../src/serve/panel/section.ts";
import type { StorageStatus } from "../src/serve/viewer-storage.ts";
import {
  body,
  eventually,
  openEvents,
  startInProcess,
  storageWithRun,
  type InProcessViewer,
} from "./support/viewer-fixture.ts";
import { startHolder, stopHolder } from "./support/holder.ts";

/** Every file under `dir` with its bytes, as one digest: equal digests, nothing written. */
async function digest(dir: string): Promise<string> {
  const hash = createHash("sha256");
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  for (const entry of entries
    .filter((e) => e.isFile())
    .sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(entry.parentPath, entry.name);
    hash.update(path).update(await readFile(path));
  }
  return hash.digest("hex");
}

let dir = "";
let viewer: InProcessViewer | undefined;
let held: ChildProcess | undefined;

afterEach(async () => {
  held?.kill("SIGKILL");
  held = undefined;
  await viewer?.close();
  viewer = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

const ENTRY_SECTION = {
  sqlite: /^SELECT id, commit_seq, record FROM entries WHERE conversation_id = \d+ ORDER BY id$/,
  jsonl: /^main\.jsonl: the commit markers that touch conversation \d+$/,
  store: /^e\/0{10}\d{6}\/… \(entries, newest 40\)$/,
};

const ADVICE = {
  sqlite: "SQLite's exclusive lock lets no other connection read the file",
  jsonl: "A JSONL storage has one owner at a time (its LOCK file)",
  store: "LevelDB lets one process open a database at a time",
};

describe.each(["sqlite", "jsonl", "store"] as const)(
  "a %s storage another process has open",
  (backend) => {
    it("says which process holds it, writes nothing, keeps serving, and opens it once the lock is free", async () => {
      dir = await mkdtemp(join(tmpdir(), `durably-viewer-locked-${backend}-`));
      const { target, conversationId } = await storageWithRun(backend, dir);
      held = await startHolder(backend, dir);
      await new Promise((resolve) => setTimeout(resolve, 300)); // the holder's own open settles
      const before = await digest(dir);

      viewer = await startInProcess(target, { retryMs: 100 });
      const status = viewer.storage.status as Extract<StorageStatus, { state: "locked" }>;
      expect(status.state).toBe("locked");
      expect(status.holder?.pid).toBe(held.pid);
      expect(status.holderText).toMatch(new RegExp(`^process ${held.pid} \\(node\\)`));
      expect(status.advice).toContain(ADVICE[backend]);
      expect(status.waiting).toBe(false);

      const feed = await openEvents(viewer, "/api/events");
      await feed.next((e) => e.event === "status" && (e.data as StorageStatus).state === "locked");
      const list = await viewer.send("/api/conversations");
      expect(list.status).toBe(503);
      expect(body(list).error).toContain("the storage is not open (locked)");
      expect((await viewer.send(`/api/conversations/${conversationId}`)).status).toBe(503);

      const wait = await viewer.post("/api/storage/open", { wait: true });
      expect(body(wait).status).toMatchObject({ state: "locked", waiting: true });
      await new Promise((resolve) => setTimeout(resolve, 500)); // several attempts, 100 ms apart
      expect(viewer.storage.status.state).toBe("locked");
      expect((await viewer.send("/api/status")).status).toBe(200);
      expect(await digest(dir), "the locked storage's files are unchanged").toBe(before);

      await stopHolder(held);
      held = undefined;
      await feed.next((e) => e.event === "status" && (e.data as StorageStatus).state === "open");
      await feed.next((e) => e.event === "conversations");
      const shown = JSON.parse(
        (await viewer.send(`/api/conversations/${conversationId}`)).body,
      ) as {
        items: unknown[];
      };
      expect(shown.items).toHaveLength(4);
      // The panel shows what the backend stored behind those four entries.
      const panel = body<StoragePanel>(
        await viewer.send(`/api/conversations/${conversationId}/storage`),
      );
      const entries = panel.sections[backend === "store" ? 1 : 0];
      expect(entries?.title).toMatch(ENTRY_SECTION[backend]);
      const text = JSON.stringify(entries);
      for (const kind of ["durably.user", "durably.assistant", "durably.tool-result"])
        expect(text).toContain(`\\"kind\\":\\"${kind}\\"`);
      if (entries?.type === "table") expect(entries.rows).toHaveLength(4);
      feed.destroy();
    });
  },
);

describe("a storage whose lock holder cannot be waited out", () => {
  it("stops waiting on request and says so", async () => {
    dir = await mkdtemp(join(tmpdir(), "durably-viewer-locked-stop-"));
    const { target } = await storageWithRun("sqlite", dir);
    held = await startHolder("sqlite", dir);
    viewer = await startInProcess(target, { retryMs: 50 });
    await viewer.post("/api/storage/open", { wait: true });
    const stopped = await viewer.post("/api/storage/stop-waiting");
    expect(body(stopped).status).toMatchObject({ state: "locked", waiting: false });
    await eventually(
      () => (viewer?.storage.status.state === "locked" ? true : undefined),
      "the status to stay locked",
    );
  });
});
