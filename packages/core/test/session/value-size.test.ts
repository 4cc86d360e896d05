import { describe, expect, it } from "vitest";
import {
  defineDoc,
  jsonBytes,
  MAX_COMMIT_BYTES,
  MAX_VALUE_BYTES,
  ROOT_CONVERSATION_ID as ROOT,
  Session,
  type Json,
  type TaskId,
  type TaskRecord,
  ValueTooLarge,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";
import { Echo, openTest } from "../support/session.js";

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

const Tree = defineDoc<{ root: Json; more?: Json }>({
  kind: "test.tree",
  version: 1,
  scope: "conversation",
  initial: () => ({ root: null }),
});

/** Small limits, so a test writes kilobytes, not megabytes. */
const SMALL = { valueBytes: 2048, commitBytes: 4096 };

function over(limit: number, bytes: number): string {
  return `${bytes} bytes of JSON text, over the limit of ${limit} bytes per value`;
}

describe("session > a value over its limit is ValueTooLarge", () => {
  it("a TypeError that names what was refused and both sizes as fields; the session goes on", async () => {
    const { session } = await openTest({ limits: SMALL });
    const error: unknown = await session
      .commit((tx) => tx.appendEntry(ROOT, { kind: "big", data: "x".repeat(SMALL.valueBytes) }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValueTooLarge);
    expect(error).toBeInstanceOf(TypeError);
    const { where, bytes, limit, code } = error as ValueTooLarge;
    expect({ where, bytes, limit, code }).toEqual({
      where: "entry.data",
      bytes: SMALL.valueBytes + 2,
      limit: SMALL.valueBytes,
      code: "VALUE_TOO_LARGE",
    });
    await session.commit((tx) => tx.appendEntry(ROOT, { kind: "small" }));
    await session.close();
  });
});

describe("session > values are limited to MAX_VALUE_BYTES of JSON text at the boundary", () => {
  it("accepts entry data of exactly MAX_VALUE_BYTES and refuses one byte more, naming the path and the size", async () => {
    const { session, storage } = await openTest();
    const exact = "a".repeat(MAX_VALUE_BYTES - 2); // plus the quotes
    const entry = await session.commit((tx) => tx.appendEntry(ROOT, { kind: "big", data: exact }));
    expect(((await session.read.entry(entry.id))?.entry.data as string).length).toBe(
      MAX_VALUE_BYTES - 2,
    );
    const calls = storage.commitCalls.length;
    const error = await rejectionOf(
      session.commit((tx) => tx.appendEntry(ROOT, { kind: "big", data: `${exact}a` })),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(
      `entry.data: ${over(MAX_VALUE_BYTES, MAX_VALUE_BYTES + 1)}`,
    );
    expect(storage.commitCalls.length).toBe(calls); // nothing reached storage
    await session.commit((tx) => tx.appendEntry(ROOT, { kind: "after" }));
    expect(session.failed).toBeUndefined();
    await session.close();
  });

  it("counts escapes: a string of control characters six times its length is refused", async () => {
    const { session } = await openTest();
    const chars = Math.ceil(MAX_VALUE_BYTES / 6); // each U+0001 is written \u0001
    const error = await rejectionOf(
      session.commit((tx) => tx.appendEntry(ROOT, { kind: "big", data: "\u0001".repeat(chars) })),
    );
    expect((error as Error).message).toBe(`entry.data: ${over(MAX_VALUE_BYTES, chars * 6 + 2)}`);
    await session.commit((tx) => tx.appendEntry(ROOT, { kind: "after" }));
    await session.close();
  });

  it("measures a nested object exactly at the limit (the bound is only a first look)", async () => {
    const { session } = await openTest({ limits: SMALL });
    const value = (text: string): Json => ({ a: [1, true, null, { é: text }] });
    const base = jsonBytes(value(""));
    const fits = value("x".repeat(SMALL.valueBytes - base));
    expect(jsonBytes(fits)).toBe(SMALL.valueBytes);
    expect(JSON.stringify(fits).length).toBe(SMALL.valueBytes - 1); // "é" is two bytes in UTF-8
    await session.commit((tx) => tx.appendEntry(ROOT, { kind: "fits", data: fits }));
    const error = await rejectionOf(
      session.commit((tx) =>
        tx.appendEntry(ROOT, {
          kind: "over",
          data: value("x".repeat(SMALL.valueBytes - base + 1)),
        }),
      ),
    );
    expect((error as Error).message).toBe(
      `entry.data: ${over(SMALL.valueBytes, SMALL.valueBytes + 1)}`,
    );
    await session.close();
  });

  it("refuses submission content and an unanswered detail over the limit", async () => {
    const { session } = await openTest({ limits: SMALL });
    const big = "s".repeat(SMALL.valueBytes);
    const content = await rejectionOf(
      session.commit((tx) => tx.createSubmission(ROOT, { type: "write", content: big })),
    );
    expect((content as Error).message).toBe(
      `submission.content: ${over(SMALL.valueBytes, SMALL.valueBytes + 2)}`,
    );
    const submission = await session.commit((tx) =>
      tx.createSubmission(ROOT, { type: "write", content: "hi" }),
    );
    const detail = await rejectionOf(
      session.commit((tx) =>
        tx.settleSubmission(submission.id, {
          status: "unanswered",
          reason: "r",
          detail: { why: big },
        }),
      ),
    );
    expect((detail as Error).message).toMatch(/^submission\.detail: \d+ bytes of JSON text/);
    expect((await session.read.submission(submission.id))?.status).toBe("queued");
    await session.close();
  });

  it("refuses a task input, and a task record whose checkpoint grew over the limit, naming the part", async () => {
    const { session } = await openTest({ limits: SMALL });
    const big = "t".repeat(SMALL.valueBytes);
    const input = await rejectionOf(
      session.commit((tx) =>
        tx.createTask(Echo, big, { ownership: { kind: "ownerless" }, conversationId: ROOT }),
      ),
    );
    expect((input as Error).message).toBe(
      `task.input: ${over(SMALL.valueBytes, SMALL.valueBytes + 2)}`,
    );
    const id: TaskId = await session.commit((tx) =>
      tx.createTask(Echo, "small", { ownership: { kind: "ownerless" }, conversationId: ROOT }),
    );
    const task = (await session.read.task(id)) as TaskRecord;
    const grown = await rejectionOf(
      session.commit((tx) =>
        tx.putTask({ ...task, state: { status: "running", checkpoint: { log: big } } }),
      ),
    );
    expect(grown).toBeInstanceOf(TypeError);
    expect((grown as Error).message).toMatch(
      new RegExp(
        `^task\\.state\\.checkpoint: task ${id} would hold \\d+ bytes of JSON text, over the limit of ${SMALL.valueBytes} bytes per value \\(this part is ${SMALL.valueBytes + 10} bytes\\)$`,
      ),
    );
    expect((await session.read.task(id))?.state.status).toBe("pending");
    await session.close();
  });

  it("refuses document values over the limit: a set, a push, a string grown by appends, a replace, the whole document", async () => {
    const { session, storage } = await openTest({ limits: SMALL });
    const big = "d".repeat(SMALL.valueBytes);
    const half = "h".repeat(SMALL.valueBytes / 2);
    await session.commit(async (tx) => {
      (await tx.doc(Tree, ROOT)).root = { text: "", list: [] };
    });
    const calls = storage.commitCalls.length;
    const attempts: [string, (draft: { root: Json; more?: Json }) => void][] = [
      ["set", (d) => void ((d.root as { [k: string]: Json }).text = big)],
      ["push", (d) => void (d.root as { list: Json[] }).list.push({ big })],
      [
        "appends",
        (d) => {
          const root = d.root as { text: string };
          root.text += half;
          root.text += half; // the string as a whole is over the limit
        },
      ],
    ];
    const messages: string[] = [];
    for (const [, change] of attempts)
      messages.push(
        String(
          (
            (await rejectionOf(
              session.commit(async (tx) => change(await tx.doc(Tree, ROOT))),
            )) as Error
          ).message,
        ),
      );
    expect(messages).toEqual([
      `test.tree.root.text: ${over(SMALL.valueBytes, SMALL.valueBytes + 2)}`,
      `test.tree.root.list[0]: ${over(SMALL.valueBytes, SMALL.valueBytes + 10)}`,
      `test.tree.root.text: ${over(SMALL.valueBytes, SMALL.valueBytes + 2)}`,
    ]);
    const replaced = await rejectionOf(
      session.commit(async (tx) => void tx.replaceDoc(await tx.doc(Tree, ROOT), { root: big })),
    );
    expect((replaced as Error).message).toBe(
      `test.tree: ${over(SMALL.valueBytes, SMALL.valueBytes + 11)}`,
    );
    // Two fields each within the limit, in a document created in one commit: the base is the whole value.
    const whole = await rejectionOf(
      session.commit(async (tx) => {
        const child = await tx.createConversation({ ownership: { kind: "ownerless" } });
        const draft = await tx.doc(Tree, child.id);
        draft.root = half;
        draft.more = half;
      }),
    );
    expect((whole as Error).message).toMatch(
      /^test\.tree \(the whole document\): \d+ bytes of JSON text, over the limit of 2048 bytes per value$/,
    );
    expect(storage.commitCalls.length).toBe(calls);
    expect(await session.snapshot(Tree, ROOT)).toEqual({ root: { text: "", list: [] } });
    await session.commit(async (tx) => {
      (await tx.doc(Tree, ROOT)).root = half; // within the limit: stored
    });
    expect(session.failed).toBeUndefined();
    await session.close();
  });

  it("refuses a commit whose values together exceed the per-commit limit, each within the value limit", async () => {
    const { session, storage } = await openTest({ limits: SMALL });
    const calls = storage.commitCalls.length;
    const third = "c".repeat(SMALL.commitBytes / 3);
    const error = await rejectionOf(
      session.commit(async (tx) => {
        for (let i = 0; i < 4; i++) await tx.appendEntry(ROOT, { kind: "part", data: third });
      }),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(
      /^commit: its writes hold \d+ bytes of JSON text, over the limit of 4096 bytes per commit$/,
    );
    expect(storage.commitCalls.length).toBe(calls);
    await session.commit(async (tx) => {
      for (let i = 0; i < 2; i++) await tx.appendEntry(ROOT, { kind: "part", data: third });
    });
    await session.close();
  });

  it("lets a session lower its limits, never raise them", async () => {
    const storage = new MemoryStorage();
    await expect(
      Session.open(storage, { limits: { valueBytes: MAX_VALUE_BYTES + 1 } }),
    ).rejects.toThrow(TypeError);
    await expect(
      Session.open(storage, { limits: { commitBytes: MAX_COMMIT_BYTES + 1 } }),
    ).rejects.toThrow(/limits\.commitBytes must be an integer from 64 to/);
    await expect(
      Session.open(storage, { limits: { valueBytes: 4096, commitBytes: 1024 } }),
    ).rejects.toThrow(/must be at least limits\.valueBytes/);
  });
});

describe("session > one storage call carries at most the per-commit budget", () => {
  it("groups concurrent commits near the limit into several storage calls, none over the budget", async () => {
    const { session, storage } = await openTest({ limits: SMALL });
    storage.commitDelayMs = 3;
    const sizes: number[] = [];
    const inner = storage.commit.bind(storage);
    storage.commit = (batches, receive) => {
      sizes.push(jsonBytes(batches as unknown as Json));
      return inner(batches, receive);
    };
    const before = storage.commitCalls.length;
    const data = "g".repeat(1000); // about a third of the budget with its record
    await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        session.commit((tx) => tx.appendEntry(ROOT, { kind: `w${i}`, data })),
      ),
    );
    const calls = storage.commitCalls.slice(before);
    expect(calls.reduce((a, b) => a + b, 0)).toBe(9);
    expect(Math.max(...calls)).toBeLessThanOrEqual(3); // grouped while the sum fits
    expect(Math.max(...calls)).toBeGreaterThan(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(SMALL.commitBytes);
    await session.close();
  });

  it("coalesces deferred progress into several batches when together they exceed the budget", async () => {
    const { session, storage } = await openTest({
      limits: SMALL,
      settings: { progress: { persistWithinMs: 60_000 } },
    });
    const sizes: number[] = [];
    const inner = storage.commit.bind(storage);
    storage.commit = (batches, receive) => {
      for (const batch of batches) sizes.push(jsonBytes(batch as unknown as Json));
      return inner(batches, receive);
    };
    for (let i = 0; i < 8; i++)
      await session.commit(
        async (tx) => {
          const draft = await tx.doc(Tree, ROOT);
          // A sliding window of two chunks: each commit sets about 1.2 KB.
          draft.root = [...((draft.root as Json[] | null) ?? []), String(i).repeat(600)].slice(-2);
        },
        { durability: "deferred" },
      );
    await session.close(); // stores the deferred progress
    expect(sizes.length).toBeGreaterThan(2); // the root, then more than one coalesced batch
    expect(Math.max(...sizes)).toBeLessThanOrEqual(SMALL.commitBytes);
  });
});
