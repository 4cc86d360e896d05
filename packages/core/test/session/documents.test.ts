import { describe, expect, it } from "vitest";
import {
  defineDoc,
  DocumentVersionError,
  ROOT_CONVERSATION_ID as ROOT,
  Session,
  type EntryId,
  type Op,
  type TaskRecord,
} from "../../src/index.js";
import { FaultyStorage } from "../support/faulty-storage.js";
import { MemoryStorage } from "../support/memory.js";
import { Echo, Notes, openTest, Settings, Slots } from "../support/session.js";

const History = defineDoc<{ lines: string[] }>({
  kind: "test.history",
  version: 1,
  scope: "conversation",
  history: "rewindable",
  initial: () => ({ lines: [] }),
});

async function revisions(
  storage: FaultyStorage,
  kind: string,
  scope = { kind: "conversation" as const, conversationId: ROOT },
) {
  const record = await storage.inner.findDocument({ kind, scope }, "current");
  return record ? storage.inner.document(record.id, "current") : undefined;
}

describe("session > documents", () => {
  it("creation stores a base; later commits store deltas; a round trip gives the value back", async () => {
    const { session, storage } = await openTest();
    const writes: unknown[] = [];
    session.subscribeCommits((e) =>
      writes.push(...e.writes.filter((w) => w.type.startsWith("document"))),
    );
    await session.commit(async (tx) => {
      const d = await tx.doc(Notes, ROOT);
      d.text = "a";
    });
    await session.commit(async (tx) => {
      (await tx.doc(Notes, ROOT)).text += "b";
    });
    expect(writes).toEqual([
      {
        type: "document.create",
        record: expect.objectContaining({ kind: "test.notes" }) as unknown,
        content: { kind: "base", version: 1, value: { text: "a", items: [] } },
      },
      {
        type: "document.change",
        id: expect.any(Number) as unknown,
        content: { kind: "delta", version: 1, ops: [["a", ["text"], "b"]] },
      },
    ]);
    expect((await revisions(storage, "test.notes"))?.value).toEqual({ text: "ab", items: [] });
    const reopened = await Session.open(storage.inner);
    expect(await reopened.snapshot(Notes, ROOT)).toEqual({ text: "ab", items: [] });
    await reopened.close();
  });

  it("checkpointWhen decides when a change is stored as a base", async () => {
    const Counted = defineDoc<{ n: number }>({
      kind: "test.counted",
      version: 1,
      scope: "session",
      initial: () => ({ n: 0 }),
      checkpointWhen: (_value, _ops, { deltasSinceBase }) => deltasSinceBase >= 2,
    });
    const { session, storage } = await openTest();
    const kinds: string[] = [];
    session.subscribeCommits((e) => {
      for (const w of e.writes) if (w.type === "document.change") kinds.push(w.content.kind);
    });
    for (let i = 1; i <= 5; i++)
      await session.commit(async (tx) => {
        (await tx.doc(Counted, null)).n = i;
      });
    expect(kinds).toEqual(["delta", "delta", "base", "delta"]);
    expect((await revisions(storage, "test.counted", { kind: "session" } as never))?.value).toEqual(
      { n: 5 },
    );
    await session.close();
  });

  it("migrates lazily on read, writes a base at the new version on the next tx.doc, rejects a newer stored version", async () => {
    const V1 = defineDoc<{ name: string }>({
      kind: "test.profile",
      version: 1,
      scope: "session",
      initial: () => ({ name: "x" }),
    });
    const V2 = defineDoc<{ first: string; last: string }>({
      kind: "test.profile",
      version: 2,
      scope: "session",
      initial: () => ({ first: "", last: "" }),
      migrate: (value) => {
        const [first = "", last = ""] = String((value as { name: string }).name).split(" ");
        return { first, last };
      },
    });
    const a = await Session.open(new MemoryStorage());
    await a.commit(async (tx) => {
      (await tx.doc(V1, null)).name = "Ada Lovelace";
    });
    expect(await a.snapshot(V2, null)).toEqual({ first: "Ada", last: "Lovelace" });
    const changes: unknown[] = [];
    a.subscribeCommits((e) => changes.push(...e.writes));
    await a.commit(async (tx) => void (await tx.doc(V2, null)));
    expect(changes).toEqual([
      {
        type: "document.change",
        id: expect.any(Number) as unknown,
        content: { kind: "base", version: 2, value: { first: "Ada", last: "Lovelace" } },
      },
    ]);
    await expect(a.snapshot(V1, null)).rejects.toBeInstanceOf(DocumentVersionError);
    await expect(a.commit((tx) => tx.doc(V1, null))).rejects.toBeInstanceOf(DocumentVersionError);
    await a.close();
  });

  it("retiring ends an incarnation; the next tx.doc creates a new one with a new id", async () => {
    const { session, storage } = await openTest();
    await session.commit(async (tx) => void ((await tx.doc(Settings, null)).theme = "dark"));
    const first = await storage.inner.findDocument(
      { kind: "test.settings", scope: { kind: "session" } },
      "current",
    );
    const seen: unknown[] = [];
    session.watchDoc(Settings, null, (v) => seen.push(v));
    expect(await session.commit((tx) => tx.retireDoc(Settings, null))).toBe(true);
    expect(await session.snapshot(Settings, null)).toBeUndefined();
    expect(await session.commit((tx) => tx.retireDoc(Settings, null))).toBe(false);
    await session.commit(async (tx) => void (await tx.doc(Settings, null)));
    const second = await storage.inner.findDocument(
      { kind: "test.settings", scope: { kind: "session" } },
      "current",
    );
    expect(second!.id).not.toBe(first!.id);
    expect(await session.snapshot(Settings, null)).toEqual({ theme: "light" });
    expect(seen).toEqual([undefined, { theme: "light" }]);
    await session.close();
  });

  it("families are addressed by (scope, key) and created from initial(seed)", async () => {
    const { session } = await openTest();
    const taskId = await session.commit((tx) =>
      tx.createTask(Echo, 1, { ownership: { kind: "ownerless" }, conversationId: ROOT }),
    );
    await session.commit(async (tx) => {
      (await tx.doc(Slots, taskId, "a", "seed-a")).output += "!";
      await tx.doc(Slots, taskId, "b", "seed-b");
    });
    expect(await session.snapshot(Slots, taskId, "a")).toEqual({ output: "seed-a!" });
    expect(await session.snapshot(Slots, taskId, "b")).toEqual({ output: "seed-b" });
    expect(await session.snapshot(Slots, taskId, "c")).toBeUndefined();
    await session.close();
  });

  it("task documents retire in the same commit that makes their task terminal", async () => {
    const { session, storage } = await openTest();
    const taskId = await session.commit((tx) =>
      tx.createTask(Echo, 1, { ownership: { kind: "ownerless" }, conversationId: ROOT }),
    );
    await session.commit(async (tx) => void (await tx.doc(Slots, taskId, "out", "x")));
    let batch: string[] = [];
    session.subscribeCommits((e) => (batch = e.writes.map((w) => w.type)));
    await session.commit(async (tx) => {
      const task = (await tx.task(taskId)) as TaskRecord;
      (await tx.doc(Slots, taskId, "out", "x")).output = "final";
      await tx.putTask({ ...task, state: { status: "terminal", outcome: { kind: "completed" } } });
    });
    expect(batch).toEqual(["task", "document.change", "document.retire"]);
    expect(await session.snapshot(Slots, taskId, "out")).toBeUndefined();
    const live = await storage.inner.scanDocuments(
      { scope: { kind: "task", taskId: taskId }, at: "current" },
      10,
    );
    expect(live.items).toEqual([]);
    await session.close();
  });

  it("watchers get the value and the ops of each published change", async () => {
    const { session } = await openTest();
    const seen: [unknown, readonly Op[]][] = [];
    const stop = session.watchDoc(Notes, ROOT, (v, ops) => seen.push([v, ops]));
    await session.commit(async (tx) => void (await tx.doc(Notes, ROOT)).items.push(1));
    await session.commit(async (tx) => void (await tx.doc(Notes, ROOT)).items.push(2));
    stop();
    await session.commit(async (tx) => void (await tx.doc(Notes, ROOT)).items.push(3));
    expect(seen).toEqual([
      [{ text: "", items: [1] }, [["r", { text: "", items: [1] }]]],
      [{ text: "", items: [1, 2] }, [["p", ["items"], 1, 0, [2]]]],
    ]);
    await session.close();
  });

  it("snapshotAsOf gives a rewindable document's value as of the commit that wrote an entry", async () => {
    const { session } = await openTest();
    const marks: EntryId[] = [];
    for (const line of ["one", "two", "three"]) {
      marks.push(
        (
          await session.commit(async (tx) => {
            (await tx.doc(History, ROOT)).lines.push(line);
            return tx.appendEntry(ROOT, { kind: "mark" });
          })
        ).id,
      );
    }
    expect(await session.snapshotAsOf(History, ROOT, marks[0]!)).toEqual({ lines: ["one"] });
    expect(await session.snapshotAsOf(History, ROOT, marks[1]!)).toEqual({ lines: ["one", "two"] });
    expect(await session.snapshot(History, ROOT)).toEqual({ lines: ["one", "two", "three"] });
    await expect(session.snapshotAsOf(Notes as never, ROOT, marks[0]!)).rejects.toThrow(
      /rewindable/,
    );
    await session.close();
  });

  it("snapshot values are frozen, so readers cannot corrupt the cache", async () => {
    const { session } = await openTest();
    await session.commit(async (tx) => void (await tx.doc(Notes, ROOT)).items.push(1));
    const value = (await session.snapshot(Notes, ROOT))!;
    expect(() => value.items.push(2)).toThrow(TypeError);
    expect(await session.snapshot(Notes, ROOT)).toEqual({ text: "", items: [1] });
    await session.close();
  });
});
