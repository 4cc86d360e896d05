import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { Session, SessionClosed, StorageLocked } from "@durably/core";
import { MemoryStorage } from "@durably/storage-memory";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { DurablyCheckpointSaver } from "../src/index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function sqliteFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "durably-lg-close-"));
  dirs.push(dir);
  return join(dir, "durably.sqlite");
}

const thread = { configurable: { thread_id: "t" } };
const meta = { source: "loop" as const, step: 0, parents: {} };
function checkpoint() {
  const c = emptyCheckpoint();
  c.id = uuid6(-1);
  return c;
}

describe("close", () => {
  it("a saver closed before its first call closes the storage it was given, and later calls reject with SessionClosed", async () => {
    const file = sqliteFile();
    const saver = new DurablyCheckpointSaver(await openSqliteStorage(file));
    await saver.close(); // e.g. shutdown before any request arrived
    // The file is free again: another storage opens it.
    const again = await openSqliteStorage(file);
    await again.close();
    // The saver does not open a session again after close.
    await expect(saver.getTuple(thread)).rejects.toBeInstanceOf(SessionClosed);
    await expect(saver.put(thread, checkpoint(), meta, {})).rejects.toMatchObject({
      name: "SessionClosed",
      code: "SESSION_CLOSED",
    });
    await expect(saver.session()).rejects.toBeInstanceOf(SessionClosed);
    await saver.close(); // idempotent
  });

  it("a saver closed after use closes its session and storage; later calls reject with the same SessionClosed", async () => {
    const file = sqliteFile();
    const saver = new DurablyCheckpointSaver(await openSqliteStorage(file));
    await saver.put(thread, checkpoint(), meta, {});
    await saver.close();
    await expect(saver.getTuple(thread)).rejects.toBeInstanceOf(SessionClosed);
    await expect(saver.put(thread, checkpoint(), meta, {})).rejects.toBeInstanceOf(SessionClosed);
    await saver.close();
    const reopened = new DurablyCheckpointSaver(await openSqliteStorage(file));
    expect(await reopened.getTuple(thread)).toBeDefined();
    await reopened.close();
  });

  it("a session passed in stays open, whether or not the saver used it", async () => {
    const session = await Session.open(new MemoryStorage());
    const unused = new DurablyCheckpointSaver(session);
    await unused.close();
    const saver = new DurablyCheckpointSaver(session);
    await saver.put(thread, checkpoint(), meta, {});
    await saver.close();
    expect(await new DurablyCheckpointSaver(session).getTuple(thread)).toBeDefined();
    await session.close();
  });

  it("a second saver given the storage object a first saver's session owns is refused StorageLocked; savers sharing a Session agree", async () => {
    const storage = new MemoryStorage();
    const first = new DurablyCheckpointSaver(storage);
    const c1 = checkpoint();
    await first.put(thread, c1, meta, {});
    const second = new DurablyCheckpointSaver(storage);
    await expect(second.getTuple(thread)).rejects.toBeInstanceOf(StorageLocked);
    const shared = new DurablyCheckpointSaver(await first.session());
    expect((await shared.getTuple(thread))?.checkpoint.id).toBe(c1.id);
    await first.close();
  });
});
