import { describe, expect, it } from "vitest";
import {
  defineDoc,
  defineDocFamily,
  MAX_KEY_BYTES,
  MAX_KIND_BYTES,
  ROOT_CONVERSATION_ID as ROOT,
  type AnyDocToken,
  type Session,
  type TaskRecord,
} from "../../src/index.js";
import type { FaultyStorage } from "../support/faulty-storage.js";
import { Echo, openTest } from "../support/session.js";

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

function over(limit: number, bytes: number): string {
  return `${bytes} bytes of JSON text, over the limit of ${limit} bytes`;
}

/** A string whose JSON text is exactly `bytes` long: `fill` (its JSON text `size` bytes, quotes aside) repeated, ASCII after. */
function text(bytes: number, fill = "k", size = 1): string {
  const count = Math.floor((bytes - 2) / size);
  return fill.repeat(count) + "a".repeat(bytes - 2 - count * size);
}

const Pages = defineDocFamily<{ n: number }, "conversation", number>({
  kind: "test.pages",
  version: 1,
  scope: "conversation",
  initial: (n) => ({ n }),
});

/** The same document type under another kind (tokens are plain objects; defineDoc would refuse a long one). */
function withKind(kind: string): AnyDocToken {
  return { ...Pages, kind } as AnyDocToken;
}

/**
 * Runs `attempt` with every storage path that could be reached armed to
 * fail (a mint failure would fail the session): the refusal must come
 * first, a TypeError with `message`, and leave the session usable.
 */
async function refusedBeforeIo(
  session: Session,
  storage: FaultyStorage,
  attempt: () => Promise<unknown>,
  message: string,
): Promise<void> {
  const calls = storage.commitCalls.length;
  storage.mintFault = new Error("mintId reached");
  storage.readFault = { name: "findDocument", error: new Error("findDocument reached") };
  let error: unknown;
  try {
    error = await rejectionOf(attempt());
  } finally {
    storage.mintFault = undefined;
    storage.readFault = undefined;
  }
  expect(error).toBeInstanceOf(TypeError);
  expect((error as Error).message).toBe(message);
  expect(storage.commitCalls.length).toBe(calls);
  expect(session.failed).toBeUndefined();
  const entry = await session.commit((tx) => tx.appendEntry(ROOT, { kind: "after" }));
  expect((await session.read.entry(entry.id))?.entry.kind).toBe("after");
}

describe("session > strings PostgreSQL indexes are limited at the boundary (MAX_KIND_BYTES, MAX_KEY_BYTES)", () => {
  it("exports the limits", () => {
    expect(MAX_KIND_BYTES).toBe(256);
    expect(MAX_KEY_BYTES).toBe(1024);
  });

  it("a document key of exactly MAX_KEY_BYTES of JSON text is stored and read back; one byte more is refused at the call", async () => {
    const { session, storage } = await openTest();
    const key = text(MAX_KEY_BYTES);
    expect(JSON.stringify(key).length).toBe(MAX_KEY_BYTES);
    await session.commit(async (tx) => {
      (await tx.doc(Pages, ROOT, key, 1)).n = 2;
    });
    expect(await session.snapshot(Pages, ROOT, key)).toEqual({ n: 2 });
    await refusedBeforeIo(
      session,
      storage,
      () =>
        session.commit(async (tx) => {
          await tx.doc(Pages, ROOT, `${key}a`, 1);
        }),
      `document key: ${over(MAX_KEY_BYTES, MAX_KEY_BYTES + 1)}`,
    );
    // The document at the limit is still there, and opens again.
    await session.commit(async (tx) => {
      (await tx.doc(Pages, ROOT, key, 1)).n = 3;
    });
    expect(await session.snapshot(Pages, ROOT, key)).toEqual({ n: 3 });
    await session.close();
  });

  it("counts a key's UTF-8 bytes, not its characters: two-, three- and four-byte characters", async () => {
    const { session, storage } = await openTest();
    for (const [fill, size] of [
      ["é", 2],
      ["漢", 3],
      ["😀", 4],
    ] as const) {
      const key = text(MAX_KEY_BYTES, fill, size);
      expect(Buffer.byteLength(JSON.stringify(key))).toBe(MAX_KEY_BYTES);
      await session.commit(async (tx) => {
        await tx.doc(Pages, ROOT, key, size);
      });
      expect(await session.snapshot(Pages, ROOT, key)).toEqual({ n: size });
      const longer = `${fill}${key}`;
      // Far fewer UTF-16 units than the limit: bytes are what count.
      expect(longer.length).toBeLessThan(MAX_KEY_BYTES / 1.9);
      await refusedBeforeIo(
        session,
        storage,
        () =>
          session.commit(async (tx) => {
            await tx.doc(Pages, ROOT, longer, size);
          }),
        `document key: ${over(MAX_KEY_BYTES, MAX_KEY_BYTES + size)}`,
      );
    }
    await session.close();
  });

  it("counts escapes as the JSON text writes them: a quote or backslash two bytes, a control character or lone surrogate six", async () => {
    const { session, storage } = await openTest();
    for (const [fill, size] of [
      ['"', 2],
      ["\\", 2],
      ["\u0001", 6],
      ["\ud800", 6],
    ] as const) {
      const key = text(MAX_KEY_BYTES, fill, size);
      expect(Buffer.byteLength(JSON.stringify(key))).toBe(MAX_KEY_BYTES);
      await session.commit(async (tx) => {
        await tx.doc(Pages, ROOT, key, size);
      });
      expect(await session.snapshot(Pages, ROOT, key)).toEqual({ n: size });
      const longer = `${fill}${key}`;
      await refusedBeforeIo(
        session,
        storage,
        () =>
          session.commit(async (tx) => {
            await tx.doc(Pages, ROOT, longer, size);
          }),
        `document key: ${over(MAX_KEY_BYTES, MAX_KEY_BYTES + size)}`,
      );
    }
    await session.close();
  });

  it("reading, watching and retiring a document under a longer key are not refused: no such document can exist", async () => {
    const { session } = await openTest();
    const long = text(MAX_KEY_BYTES + 1);
    expect(await session.snapshot(Pages, ROOT, long)).toBeUndefined();
    session.watchDoc(Pages, ROOT, long, () => undefined)();
    expect(await session.commit((tx) => tx.retireDoc(Pages, ROOT, long))).toBe(false);
    await session.close();
  });

  it("a document kind of exactly MAX_KIND_BYTES is defined and stored; one byte more is refused by defineDoc and at tx.doc", async () => {
    const { session, storage } = await openTest();
    const kind = text(MAX_KIND_BYTES, "漢", 3);
    expect(Buffer.byteLength(JSON.stringify(kind))).toBe(MAX_KIND_BYTES);
    const Single = defineDoc<{ n: number }, "conversation">({
      kind,
      version: 1,
      scope: "conversation",
      initial: () => ({ n: 0 }),
    });
    const Family = defineDocFamily<{ n: number }, "conversation", number>({
      kind: `${kind.slice(0, -1)}b`, // another kind, also MAX_KIND_BYTES
      version: 1,
      scope: "conversation",
      initial: (n) => ({ n }),
    });
    const key = text(MAX_KEY_BYTES);
    await session.commit(async (tx) => {
      (await tx.doc(Single, ROOT)).n = 1;
      (await tx.doc(Family, ROOT, key, 5)).n += 1;
    });
    expect(await session.snapshot(Single, ROOT)).toEqual({ n: 1 });
    expect(await session.snapshot(Family, ROOT, key)).toEqual({ n: 6 });

    const longer = `${kind}a`;
    const message = over(MAX_KIND_BYTES, MAX_KIND_BYTES + 1);
    expect(() =>
      defineDoc({ kind: longer, version: 1, scope: "session", initial: () => ({}) }),
    ).toThrow(new TypeError(`defineDoc kind: ${message}`));
    expect(() =>
      defineDocFamily({ kind: longer, version: 1, scope: "session", initial: () => ({}) }),
    ).toThrow(new TypeError(`defineDocFamily kind: ${message}`));
    await refusedBeforeIo(
      session,
      storage,
      () =>
        session.commit(async (tx) => {
          await tx.doc(withKind(longer) as typeof Pages, ROOT, "k", 1);
        }),
      `document kind: ${message}`,
    );
    // Escapes count in kinds too: 42 control characters are 254 bytes, 43 are 260.
    const escaped = "\u0001".repeat(43);
    await refusedBeforeIo(
      session,
      storage,
      () =>
        session.commit(async (tx) => {
          await tx.doc(withKind(escaped) as typeof Pages, ROOT, "k", 1);
        }),
      `document kind: ${over(MAX_KIND_BYTES, 43 * 6 + 2)}`,
    );
    await session.commit(async (tx) => {
      await tx.doc(withKind("\u0001".repeat(42)) as typeof Pages, ROOT, "k", 1);
    });
    await session.close();
  });

  it("a task kind of exactly MAX_KIND_BYTES is created and replaced; one byte more is refused by createTask and putTask", async () => {
    const { session, storage } = await openTest();
    const name = text(MAX_KIND_BYTES, "é", 2);
    expect(Buffer.byteLength(JSON.stringify(name))).toBe(MAX_KIND_BYTES);
    const taskId = await session.commit((tx) =>
      tx.createTask(
        { ...Echo, name },
        { a: 1 },
        {
          ownership: { kind: "ownerless" },
          conversationId: ROOT,
        },
      ),
    );
    const task = (await session.read.task(taskId)) as TaskRecord;
    expect(task.kind).toBe(name);
    await session.commit((tx) => tx.putTask({ ...task, abortRequested: true }));
    expect((await session.read.task(taskId))?.abortRequested).toBe(true);

    const longer = `${name}a`;
    const bytes = MAX_KIND_BYTES + 1;
    await refusedBeforeIo(
      session,
      storage,
      () =>
        session.commit((tx) =>
          tx.createTask(
            { ...Echo, name: longer },
            { a: 1 },
            {
              ownership: { kind: "ownerless" },
              conversationId: ROOT,
            },
          ),
        ),
      `task.kind: ${over(MAX_KIND_BYTES, bytes)}`,
    );
    const calls = storage.commitCalls.length;
    const error = await rejectionOf(session.commit((tx) => tx.putTask({ ...task, kind: longer })));
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(`task.kind: ${over(MAX_KIND_BYTES, bytes)}`);
    expect(storage.commitCalls.length).toBe(calls);
    expect(session.failed).toBeUndefined();
    expect((await session.read.task(taskId))?.kind).toBe(name);
    await session.close();
  });

  it("a submission requestId of exactly MAX_KEY_BYTES is stored and found; one byte more is refused at the call", async () => {
    const { session, storage } = await openTest();
    for (const [fill, size] of [
      ["r", 1],
      ["漢", 3],
      ["\u0000", 6],
    ] as const) {
      const requestId = text(MAX_KEY_BYTES, fill, size);
      expect(Buffer.byteLength(JSON.stringify(requestId))).toBe(MAX_KEY_BYTES);
      const submission = await session.commit((tx) =>
        tx.createSubmission(ROOT, { type: "write", content: size, requestId }),
      );
      expect((await session.read.submissionByRequest(ROOT, requestId))?.id).toBe(submission.id);
      const longer = `${fill}${requestId}`;
      await refusedBeforeIo(
        session,
        storage,
        () =>
          session.commit((tx) =>
            tx.createSubmission(ROOT, { type: "write", content: 0, requestId: longer }),
          ),
        `submission.requestId: ${over(MAX_KEY_BYTES, MAX_KEY_BYTES + size)}`,
      );
      expect(await session.read.submissionByRequest(ROOT, longer)).toBeUndefined();
    }
    await session.close();
  });

  it("entry kinds are not indexed by any backend and stay unlimited (but for the value limits)", async () => {
    const { session } = await openTest();
    const kind = "e".repeat(10 * MAX_KEY_BYTES);
    const entry = await session.commit((tx) => tx.appendEntry(ROOT, { kind }));
    expect((await session.read.entry(entry.id))?.entry.kind).toBe(kind);
    await session.close();
  });
});
