import { describe, expect, it } from "vitest";
import { defineDoc, ROOT_CONVERSATION_ID, Session } from "../../src/index.js";
// Internal building blocks of the harness (not exported): tested on their own terms.
import { FrameQueue } from "../../src/harness/frame-queue.js";
import { ProgressWriter } from "../../src/harness/progress.js";
import { MemoryStorage } from "../support/memory.js";

const Log = defineDoc<{ text: string }, "conversation">({
  kind: "test.log",
  version: 1,
  scope: "conversation",
  initial: () => ({ text: "" }),
});

describe("ProgressWriter", () => {
  it("keeps every item in order and gathers items pushed while a commit is on the line", async () => {
    const session = await Session.open(new MemoryStorage(), {
      settings: { progress: { persistWithinMs: 10_000 } },
    });
    const calls: number[] = [];
    const writer = new ProgressWriter<string>(session, async (tx, items) => {
      calls.push(items.length);
      const doc = await tx.doc(Log, ROOT_CONVERSATION_ID);
      doc.text += items.join("");
    });
    const seen: string[] = [];
    session.watchDoc(Log, ROOT_CONVERSATION_ID, (value) => void seen.push(value?.text ?? ""));
    const pushes = Array.from({ length: 1000 }, (_, i) => writer.push(`${i % 10}`));
    await Promise.all(pushes);
    await writer.settle();
    const expected = Array.from({ length: 1000 }, (_, i) => `${i % 10}`).join("");
    expect(seen.at(-1)).toBe(expected);
    expect(calls.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(calls.length).toBeLessThan(10); // gathered, not one commit per item
    // deferred: nothing stored until a read, an ordinary commit, close or the window
    expect(session.commitStats.batches).toBe(1); // the root conversation only
    expect(await session.snapshot(Log, ROOT_CONVERSATION_ID)).toEqual({ text: expected });
    expect(session.commitStats.batches).toBe(2);
    await session.close();
  });

  it("rejects later pushes and settle() with the first commit failure", async () => {
    const session = await Session.open(new MemoryStorage());
    const writer = new ProgressWriter<string>(session, () =>
      Promise.reject(new RangeError("bad write")),
    );
    await expect(writer.push("a")).rejects.toThrow("bad write");
    await expect(writer.push("b")).rejects.toThrow("bad write");
    await expect(writer.settle()).rejects.toThrow("bad write");
    await session.close();
  });
});

describe("FrameQueue", () => {
  it("delivers in order to a fast listener and collapses a backlog beyond the limit", async () => {
    const delivered: string[] = [];
    let release!: () => void;
    let gate: Promise<void> | undefined = new Promise((resolve) => (release = resolve));
    let current = 0;
    const queue = new FrameQueue<string>(
      async (frame) => {
        delivered.push(frame);
        if (gate) await gate;
      },
      () => `full@${current}`,
      (error) => {
        throw error;
      },
      3,
    );
    queue.push("f0"); // delivered at once, the listener then blocks
    for (current = 1; current <= 3; current++) queue.push(`f${current}`);
    expect(queue.pending).toBe(3);
    queue.push("f4"); // over the limit: the backlog collapses
    current = 4;
    queue.push("f5"); // covered by the collapsed frame
    current = 5;
    expect(queue.pending).toBe(1);
    gate = undefined;
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(delivered).toEqual(["f0", "full@5"]);
    queue.push("f6");
    expect(delivered).toEqual(["f0", "full@5", "f6"]);
  });

  it("reports a throwing listener and goes on", async () => {
    const errors: unknown[] = [];
    const delivered: number[] = [];
    const queue = new FrameQueue<number>(
      (n) => {
        if (n === 1) throw new Error("listener broke");
        delivered.push(n);
      },
      () => -1,
      (error) => errors.push(error),
    );
    queue.push(1);
    queue.push(2);
    await new Promise((r) => setTimeout(r, 0));
    expect(delivered).toEqual([2]);
    expect(errors).toHaveLength(1);
  });
});
