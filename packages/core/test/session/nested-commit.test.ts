import { describe, expect, it } from "vitest";
import { NestedCommit, ROOT_CONVERSATION_ID as ROOT } from "../../src/index.js";
import { openTest } from "../support/session.js";

/** Rejects naming `what` when `promise` does not settle within `ms`: a deadlock fails the test instead. */
function within<T>(promise: Promise<T>, what: string, ms = 2_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const kinds = async (session: Awaited<ReturnType<typeof openTest>>["session"]) =>
  (await session.read.scanEntries({ conversationId: ROOT, order: "ascending" }, 100)).items.map(
    (e) => e.kind,
  );

describe("session > a commit inside a commit callback", () => {
  it("a nested session.commit awaited by the callback rejects NestedCommit at once, and so does the outer commit; nothing of either is stored", async () => {
    const { session } = await openTest();
    let inner: unknown;
    await session.commit((tx) => tx.appendEntry(ROOT, { kind: "before" }));
    const nested = session.commit(async (tx) => {
      const outer = tx.appendEntry(ROOT, { kind: "outer" });
      try {
        await session.commit((t) => t.appendEntry(ROOT, { kind: "inner" }));
      } catch (error) {
        inner = error;
        throw error;
      }
      return outer;
    });
    const error = await within(
      nested.then(
        () => undefined,
        (e: unknown) => e,
      ),
      "the outer commit",
    );
    expect(inner).toBeInstanceOf(NestedCommit);
    expect(error).toBe(inner);
    expect((error as Error).message).toContain("write through the callback's tx");
    expect(await kinds(session)).toEqual(["before"]);
    // The line is free: the next commit runs.
    await within(
      session.commit((tx) => tx.appendEntry(ROOT, { kind: "after" })),
      "a commit after the nested one",
    );
    expect(await kinds(session)).toEqual(["before", "after"]);
    await session.close();
  });

  it("a nested session.commit the callback does not await rejects NestedCommit and the outer commit stores what it wrote", async () => {
    const { session } = await openTest();
    let nested: Promise<unknown> | undefined;
    await within(
      session.commit((tx) => {
        nested = session.commit((t) => t.appendEntry(ROOT, { kind: "inner" }));
        nested.catch(() => undefined);
        return tx.appendEntry(ROOT, { kind: "outer" });
      }),
      "the outer commit",
    );
    await expect(nested).rejects.toBeInstanceOf(NestedCommit);
    expect(await kinds(session)).toEqual(["outer"]);
    await session.close();
  });

  it("a deferred progress commit started inside a commit callback is queued after it, as output writers need", async () => {
    const { session } = await openTest();
    let progress: Promise<unknown> | undefined;
    await within(
      session.commit((tx) => {
        progress = session.commit((t) => t.appendEntry(ROOT, { kind: "progress" }), {
          durability: "deferred",
        });
        return tx.appendEntry(ROOT, { kind: "outer" });
      }),
      "the outer commit",
    );
    await within(progress as Promise<unknown>, "the deferred commit");
    expect(await kinds(session)).toEqual(["outer", "progress"]);
    await session.close();
  });
});
