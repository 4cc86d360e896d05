import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  defineDoc,
  ROOT_CONVERSATION_ID as ROOT,
  SessionFailed,
  type Session,
  type Transaction,
} from "../../src/index.js";
import type { FaultyStorage } from "../support/faulty-storage.js";
import { Notes, openTest } from "../support/session.js";

/**
 * When storage.commit fails, every promise the session creates must be
 * observed: the caller catches its commit's rejection and the process must
 * see no `unhandledRejection` (Node's default mode would kill it).
 */
let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};

beforeEach(() => {
  unhandled = [];
  process.on("unhandledRejection", onUnhandled);
});

afterEach(() => {
  process.off("unhandledRejection", onUnhandled);
});

/** Lets Node run its unhandled-rejection check (it runs after the microtask queue drains). */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 1));
}

const Rewindable = defineDoc<{ text: string }>({
  kind: "test.rewindable",
  version: 1,
  scope: "conversation",
  history: "rewindable",
  fork: "asOf",
  initial: () => ({ text: "" }),
});

const stream = (text: string) => async (tx: Transaction) => {
  (await tx.doc(Notes, ROOT)).text += text;
};

async function failing(
  how: "reject" | "throw",
  settings?: { persistWithinMs: number },
): Promise<{ session: Session; storage: FaultyStorage; cause: Error }> {
  const { session, storage } = await openTest(settings ? { settings: { progress: settings } } : {});
  await session.commit(async (tx) => {
    await tx.doc(Notes, ROOT);
    await tx.doc(Rewindable, ROOT);
  });
  const cause = new Error(`injected: storage.commit ${how}s`);
  storage.nextCommit =
    how === "reject"
      ? () => Promise.reject(cause)
      : () => {
          throw cause;
        };
  return { session, storage, cause };
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe("session > a failed storage.commit leaves no unhandled rejection", () => {
  for (const how of ["reject", "throw"] as const) {
    it(`when storage.commit ${how}s under an ordinary commit that stores deferred progress first`, async () => {
      const { session, cause } = await failing(how, { persistWithinMs: 60_000 });
      await session.commit(stream("a"), { durability: "deferred" });
      const error = await caught(session.commit((tx) => tx.appendEntry(ROOT, { kind: "x" })));
      expect(error).toBeInstanceOf(SessionFailed);
      expect((error as SessionFailed).cause).toBe(cause);
      await turns();
      await session.close();
      await turns();
      expect(unhandled).toEqual([]);
    });

    it(`when storage.commit ${how}s under the deferred-progress timer`, async () => {
      const { session } = await failing(how, { persistWithinMs: 1 });
      await session.commit(stream("a"), { durability: "deferred" });
      await turns(10);
      expect(session.failed).toBeInstanceOf(SessionFailed);
      await session.close();
      await turns();
      expect(unhandled).toEqual([]);
    });

    it(`when storage.commit ${how}s under several queued commits`, async () => {
      const { session, storage } = await failing(how);
      storage.commitDelayMs = 5;
      const results = await Promise.allSettled([
        session.commit((tx) => tx.appendEntry(ROOT, { kind: "a" })),
        session.commit((tx) => tx.appendEntry(ROOT, { kind: "b" })),
        session.commit(stream("c"), { durability: "deferred" }),
        session.commit((tx) => tx.appendEntry(ROOT, { kind: "d" })),
      ]);
      expect(results.map((r) => r.status)).toEqual([
        "rejected",
        "rejected",
        "rejected",
        "rejected",
      ]);
      await turns();
      await session.close();
      await turns();
      expect(unhandled).toEqual([]);
    });

    it(`when storage.commit ${how}s while a fork waits for its fork point's deferred commit to be stored`, async () => {
      const { session } = await failing(how, { persistWithinMs: 60_000 });
      const point = await session.commit(
        async (tx) => {
          (await tx.doc(Rewindable, ROOT)).text = "at the fork point";
          return tx.appendEntry(ROOT, { kind: "fork point" });
        },
        { durability: "deferred" },
      );
      const error = await caught(
        session.commit((tx) =>
          tx.forkConversation(ROOT, point.id, { ownership: { kind: "ownerless" } }),
        ),
      );
      expect(error).toBeInstanceOf(SessionFailed);
      await turns();
      await session.close();
      await turns();
      expect(unhandled).toEqual([]);
    });
  }
});
