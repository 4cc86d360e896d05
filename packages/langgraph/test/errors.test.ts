import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { emptyCheckpoint, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { Session, type ConversationId, type Storage } from "@durably/core";
import { MemoryStorage } from "@durably/storage-memory";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { IndexDoc, ThreadDoc } from "../src/documents.js";
import {
  CheckpointConfigError,
  CheckpointDataCorrupted,
  CheckpointValueError,
  DurablyCheckpointSaver,
} from "../src/index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function checkpoint(values: Record<string, unknown> = {}): Checkpoint {
  const c = emptyCheckpoint();
  c.id = uuid6(-1);
  c.channel_values = values;
  c.channel_versions = Object.fromEntries(Object.keys(values).map((k) => [k, 1]));
  return c;
}
const meta = { source: "loop" as const, step: 0, parents: {} };

describe("bad input", () => {
  it("rejects configs it cannot use with a typed error naming the field", async () => {
    const saver = new DurablyCheckpointSaver(new MemoryStorage());
    const c = checkpoint();
    await expect(saver.put({}, c, meta, {})).rejects.toMatchObject({
      name: "CheckpointConfigError",
      code: "LANGGRAPH_BAD_CONFIG",
      message: "put: config.configurable is missing",
    });
    await expect(
      saver.put({ configurable: { thread_id: { id: 1 } } }, c, meta, {}),
    ).rejects.toThrow("put: config.configurable.thread_id must be a non-empty string, got object");
    await expect(
      saver.putWrites({ configurable: { thread_id: "t" } }, [["a", 1]], "task"),
    ).rejects.toBeInstanceOf(CheckpointConfigError);
    await expect(
      saver.put({ configurable: { thread_id: "t" } }, c, meta, { a: Number.NaN }),
    ).rejects.toMatchObject({
      name: "CheckpointValueError",
      message:
        'put: newVersions["a"]: a channel version must be a string or a finite number, got NaN',
    });
    // Nothing of the refused calls was stored; the saver goes on.
    expect(await saver.getTuple({ configurable: { thread_id: "t" } })).toBeUndefined();
    await saver.put({ configurable: { thread_id: "t" } }, c, meta, {});
    expect(await saver.getTuple({ configurable: { thread_id: "t" } })).toBeDefined();
    await saver.close();
  });

  it("refuses a thread id longer than a Durably document key may be, naming both sizes; reads of it find nothing", async () => {
    const saver = new DurablyCheckpointSaver(new MemoryStorage());
    const atLimit = "é".repeat(511); // 1,022 bytes and two quotes: exactly MAX_KEY_BYTES
    const over = `${atLimit}x`;
    await saver.put({ configurable: { thread_id: atLimit } }, checkpoint(), meta, {});
    expect(await saver.getTuple({ configurable: { thread_id: atLimit } })).toBeDefined();
    await expect(
      saver.put({ configurable: { thread_id: over } }, checkpoint(), meta, {}),
    ).rejects.toMatchObject({
      name: "CheckpointConfigError",
      message:
        "put: config.configurable.thread_id is 1025 bytes of JSON text, over the limit of 1024 bytes (it keys a Durably document); nothing was stored",
    });
    await expect(
      saver.putWrites(
        { configurable: { thread_id: over, checkpoint_id: "c" } },
        [["a", 1]],
        "task",
      ),
    ).rejects.toBeInstanceOf(CheckpointConfigError);
    await expect(
      saver.putWrites(
        { configurable: { thread_id: atLimit, checkpoint_id: over } },
        [["a", 1]],
        "task",
      ),
    ).rejects.toThrow(
      "putWrites: config.configurable.checkpoint_id is 1025 bytes of JSON text, over the limit of 1024 bytes",
    );
    expect(await saver.getTuple({ configurable: { thread_id: over } })).toBeUndefined();
    await saver.close();
  });

  it("reports stored data it did not write as CheckpointDataCorrupted, naming conversation and entry", async () => {
    const session = await Session.open(new MemoryStorage());
    const saver = new DurablyCheckpointSaver(session);
    const c = checkpoint({ x: 1 });
    await saver.put({ configurable: { thread_id: "t" } }, c, meta, c.channel_versions);
    // Point the namespace's newest checkpoint at an entry that is not a checkpoint.
    const thread = await session.snapshot(ThreadDoc, null, "t");
    const conv = thread?.namespaces[""] as ConversationId;
    const foreign = await session.commit(async (tx) => {
      const entry = await tx.appendEntry(conv, { kind: "app.other", data: { hello: 1 } });
      const index = await tx.doc(IndexDoc, conv);
      index.checkpoints.push([["zzzz", entry.id]]);
      return entry.id;
    });
    const read = saver.getTuple({ configurable: { thread_id: "t" } });
    await expect(read).rejects.toBeInstanceOf(CheckpointDataCorrupted);
    await expect(read).rejects.toThrow(
      `conversation ${conv} entry ${foreign}: kind is "app.other", not a checkpoint`,
    );
    await saver.close();
    await session.close();
  });
});

describe("checkpoint too large for one entry", () => {
  it("refuses it with CheckpointValueError naming the checkpoint and its largest channels; nothing is stored and the saver goes on", async () => {
    const saver = new DurablyCheckpointSaver(new MemoryStorage());
    const config = { configurable: { thread_id: "t", checkpoint_ns: "sub:1" } };
    // 25 MiB of bytes: 33.3 MiB as base64, over core's 32 MiB per value.
    const big = checkpoint({ blob: new Uint8Array(25 << 20), small: "x", n: 1 });
    const put = saver.put(config, big, meta, big.channel_versions);
    await expect(put).rejects.toBeInstanceOf(CheckpointValueError);
    await expect(put).rejects.toMatchObject({
      name: "CheckpointValueError",
      code: "LANGGRAPH_BAD_VALUE",
    });
    const error = (await put.catch((e: unknown) => e)) as CheckpointValueError;
    expect(error.message).toMatch(
      new RegExp(
        `^put: checkpoint ${big.id} of thread "t" namespace "sub:1" is \\d+ bytes of JSON text, over the limit of 33554432 bytes for one checkpoint entry`,
      ),
    );
    expect(error.message).toMatch(
      /; largest inline channels: "blob" 349525\d\d bytes, "small" \d+ bytes, "n" \d+ bytes; metadata \d+ bytes; /,
    );
    expect(error.message).toContain("nothing was stored");
    expect(error.cause).toBeInstanceOf(TypeError);
    // Nothing of it was stored; the session did not fail and the saver goes on.
    expect(await saver.getTuple(config)).toBeUndefined();
    const small = checkpoint({ n: 2 });
    await saver.put(config, small, meta, small.channel_versions);
    expect((await saver.getTuple(config))?.checkpoint.id).toBe(small.id);
    await saver.close();
  });
});

describe("atomic put", () => {
  it("a put whose storage commit fails leaves no trace: neither its entry, nor its channel deltas, nor the index", async () => {
    const dir = mkdtempSync(join(tmpdir(), "durably-lg-fault-"));
    dirs.push(dir);
    const file = join(dir, "fault.sqlite");
    let fail = false;
    const faulty = (storage: Storage): Storage =>
      new Proxy(storage, {
        get(target, prop) {
          if (prop === "commit" && fail) return () => Promise.reject(new Error("disk unplugged"));
          const value = Reflect.get(target, prop) as unknown;
          return typeof value === "function" ? (value as () => unknown).bind(target) : value;
        },
      });
    const saver = new DurablyCheckpointSaver(faulty(await openSqliteStorage(file)));
    const first = checkpoint({ messages: [new HumanMessage({ content: "one", id: "1" })] });
    const config = await saver.put(
      { configurable: { thread_id: "t" } },
      first,
      meta,
      first.channel_versions,
    );
    const second = checkpoint({
      messages: [
        ...(first.channel_values.messages as HumanMessage[]),
        new HumanMessage({ content: "two", id: "2" }),
      ],
    });
    second.channel_versions = { messages: 2 };
    fail = true;
    await expect(saver.put(config, second, meta, { messages: 2 })).rejects.toMatchObject({
      name: "SessionFailed",
    });
    // The session is failed: every later call says so.
    await expect(saver.getTuple(config)).rejects.toMatchObject({ name: "SessionFailed" });
    await saver.close().catch(() => undefined);

    const reopened = new DurablyCheckpointSaver(await openSqliteStorage(file));
    const latest = await reopened.getTuple({ configurable: { thread_id: "t" } });
    expect(latest?.checkpoint.id).toBe(first.id);
    expect(latest?.checkpoint.channel_values.messages).toHaveLength(1);
    expect(
      await reopened.getTuple({ configurable: { thread_id: "t", checkpoint_id: second.id } }),
    ).toBeUndefined();
    // And it goes on from there: the same put now succeeds.
    await reopened.put(config, second, meta, { messages: 2 });
    expect(
      (await reopened.getTuple({ configurable: { thread_id: "t" } }))?.checkpoint.channel_values
        .messages,
    ).toHaveLength(2);
    await reopened.close();
  });
});

describe("deltas by identity or by content", () => {
  for (const deltas of ["identity", "content"] as const)
    it(`a message changed in place after it was stored is ${deltas === "identity" ? "not stored again (identity: documented)" : "stored (content)"}`, async () => {
      const saver = new DurablyCheckpointSaver(new MemoryStorage(), { deltas });
      const m1 = new HumanMessage({ content: "original", id: "1" });
      const first = checkpoint({ messages: [m1] });
      const config = await saver.put({ configurable: { thread_id: "t" } }, first, meta, {
        messages: 1,
      });
      m1.content = "changed in place";
      const second = checkpoint({ messages: [m1, new HumanMessage({ content: "next", id: "2" })] });
      second.channel_versions = { messages: 2 };
      const stored = await saver.put(config, second, meta, { messages: 2 });
      const read = (await saver.getTuple(stored))?.checkpoint.channel_values
        .messages as HumanMessage[];
      expect(read.map((m) => m.content)).toEqual(
        deltas === "identity" ? ["original", "next"] : ["changed in place", "next"],
      );
      await saver.close();
    });
});
