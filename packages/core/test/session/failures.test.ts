import { describe, expect, it } from "vitest";
import {
  BatchRefused,
  ReadAfterWrite,
  ROOT_CONVERSATION_ID as ROOT,
  SessionClosed,
  SessionFailed,
  StorageRequestError,
  defineDoc,
  type EntryId,
} from "../../src/index.js";
import { Notes, openTest } from "../support/session.js";

const Throwing = defineDoc<{ n: number }>({
  kind: "test.throwing",
  version: 1,
  scope: "session",
  initial: () => ({ n: 0 }),
  checkpointWhen: () => {
    throw new Error("checkpointWhen exploded");
  },
});

async function seedNote(session: Awaited<ReturnType<typeof openTest>>["session"], text: string) {
  await session.commit(async (tx) => {
    (await tx.doc(Notes, ROOT)).text = text;
  });
}

describe("failure semantics", () => {
  it("the commit callback throws: nothing stored, nothing published, the session goes on", async () => {
    const { session, storage } = await openTest();
    await seedNote(session, "old");
    const published: unknown[] = [];
    session.watchDoc(Notes, ROOT, (v) => published.push(v));
    const calls = storage.commitCalls.length;
    await expect(
      session.commit(async (tx) => {
        await tx.appendEntry(ROOT, { kind: "doomed" });
        (await tx.doc(Notes, ROOT)).text = "new";
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(storage.commitCalls.length).toBe(calls);
    expect(published).toEqual([]);
    expect((await session.read.scanEntries({ conversationId: ROOT }, 10)).items).toEqual([]);
    expect(await session.snapshot(Notes, ROOT)).toEqual({ text: "old", items: [] });
    await seedNote(session, "after");
    expect(await session.snapshot(Notes, ROOT)).toEqual({ text: "after", items: [] });
    await session.close();
  });

  it("preparation fails (bad JSON, ReadAfterWrite, checkpointWhen throws): discarded, the session goes on", async () => {
    const { session, storage } = await openTest();
    await session.commit(async (tx) => void (await tx.doc(Throwing, null)));
    const calls = storage.commitCalls.length;
    await expect(
      session.commit((tx) => tx.appendEntry(ROOT, { kind: "x", data: { bad: NaN } })),
    ).rejects.toBeInstanceOf(TypeError);
    await expect(
      session.commit(async (tx) => {
        await tx.appendEntry(ROOT, { kind: "x" });
        await tx.task(5 as never);
      }),
    ).rejects.toBeInstanceOf(ReadAfterWrite);
    await expect(
      session.commit(async (tx) => {
        await tx.appendEntry(ROOT, { kind: "with-doc" });
        (await tx.doc(Throwing, null)).n = 1;
      }),
    ).rejects.toThrow("checkpointWhen exploded");
    expect(storage.commitCalls.length).toBe(calls);
    expect((await session.read.scanEntries({ conversationId: ROOT }, 10)).items).toEqual([]);
    expect(await session.snapshot(Throwing, null)).toEqual({ n: 0 });
    expect(session.failed).toBeUndefined();
    await session.close();
  });

  it("storage.commit rejects: the session fails, pending commits reject, later calls reject with SessionFailed", async () => {
    const { session, storage } = await openTest();
    const cause = new Error("disk on fire");
    storage.commitDelayMs = 5;
    storage.nextCommit = () => Promise.reject(cause);
    const first = session.commit((tx) => tx.appendEntry(ROOT, { kind: "a" }));
    const second = session.commit((tx) => tx.appendEntry(ROOT, { kind: "b" }));
    const results = await Promise.allSettled([first, second]);
    for (const result of results) {
      expect(result.status).toBe("rejected");
      const reason = (result as PromiseRejectedResult).reason as SessionFailed;
      expect(reason).toBeInstanceOf(SessionFailed);
      expect(reason.cause).toBe(cause);
    }
    await expect(session.commit(() => 1)).rejects.toBeInstanceOf(SessionFailed);
    await expect(session.snapshot(Notes, ROOT)).rejects.toBeInstanceOf(SessionFailed);
    await expect(session.read.conversation(ROOT)).rejects.toBeInstanceOf(SessionFailed);
    expect(session.failed?.code).toBe("SESSION_FAILED");
    await session.close();
    await session.close(); // idempotent
  });

  it("storage.commit throws synchronously: same as a rejection", async () => {
    const { session, storage } = await openTest();
    storage.nextCommit = () => {
      throw new Error("sync throw");
    };
    await expect(
      session.commit((tx) => tx.appendEntry(ROOT, { kind: "a" })),
    ).rejects.toBeInstanceOf(SessionFailed);
    await expect(session.commit(() => 1)).rejects.toBeInstanceOf(SessionFailed);
    await session.close();
  });

  it("{ stored, refused }: earlier batches stored and published, the refused and later ones not, the session fails", async () => {
    const { session, storage } = await openTest();
    storage.commitDelayMs = 10;
    const blocker = session.commit((tx) => tx.appendEntry(ROOT, { kind: "first-call" }));
    await new Promise((resolve) => setTimeout(resolve, 1)); // first call in flight; the next three queue up together
    storage.nextCommit = undefined;
    const refusal = new BatchRefused("immutable-record", 1, 0, "injected refusal");
    const watched: string[] = [];
    session.watchDoc(Notes, ROOT, (v) => watched.push(v?.text ?? "-"));
    const a = session.commit(async (tx) => {
      (await tx.doc(Notes, ROOT)).text = "a";
      return tx.appendEntry(ROOT, { kind: "a" });
    });
    const b = session.commit((tx) => tx.appendEntry(ROOT, { kind: "b" }));
    const c = session.commit((tx) => tx.appendEntry(ROOT, { kind: "c" }));
    await blocker;
    storage.nextCommit = async (batches, receive) => {
      // store batch 0 for real, refuse batch 1
      const result = await storage.inner.commit(batches.slice(0, 1), receive);
      return { stored: result.stored, refused: refusal };
    };
    const settled = await Promise.allSettled([a, b, c]);
    expect(storage.commitCalls.slice(-1)).toEqual([3]);
    expect(settled[0].status).toBe("fulfilled");
    for (const rejected of settled.slice(1)) {
      expect(rejected.status).toBe("rejected");
      expect((rejected as PromiseRejectedResult).reason).toBeInstanceOf(SessionFailed);
      expect(((rejected as PromiseRejectedResult).reason as SessionFailed).cause).toBe(refusal);
    }
    expect(watched).toEqual(["a"]);
    const stored = await storage.inner.scanEntries({ conversationId: ROOT }, 10);
    expect(stored.items.map((e) => e.kind)).toEqual(["a", "first-call"]);
    await expect(session.commit(() => 1)).rejects.toBeInstanceOf(SessionFailed);
    await session.close();
  });

  it("storage.mintId throws, even a StorageRequestError: the session fails", async () => {
    const { session, storage } = await openTest();
    storage.mintFault = new StorageRequestError("bad-argument", "mint went wrong");
    const failed = session.commit((tx) => tx.appendEntry(ROOT, { kind: "a" }));
    await expect(failed).rejects.toBeInstanceOf(SessionFailed);
    await expect(failed).rejects.toMatchObject({ cause: storage.mintFault });
    storage.mintFault = undefined;
    await expect(
      session.commit((tx) => tx.appendEntry(ROOT, { kind: "b" })),
    ).rejects.toBeInstanceOf(SessionFailed);
    await session.close();
  });

  it("a read rejecting with StorageRequestError fails only that read; the session goes on", async () => {
    const { session } = await openTest();
    await expect(session.read.scanEntries({ conversationId: ROOT }, 0)).rejects.toBeInstanceOf(
      StorageRequestError,
    );
    await expect(session.read.scanTasks({ nope: 1 } as never, 10)).rejects.toBeInstanceOf(
      StorageRequestError,
    );
    await expect(
      session.commit((tx) => tx.scanEntries({ conversationId: ROOT }, 10, { garbage: true })),
    ).rejects.toBeInstanceOf(StorageRequestError);
    // caught inside the callback: the commit still goes through
    const entry = await session.commit(async (tx) => {
      await tx.scanTasks({ bogus: true } as never, 10).catch((e: unknown) => e);
      return tx.appendEntry(ROOT, { kind: "still-works" });
    });
    expect((await session.read.entry(entry.id))?.entry.kind).toBe("still-works");
    expect(session.failed).toBeUndefined();
    await session.close();
  });

  it("any other read failure rejects the read; the session goes on", async () => {
    const { session, storage } = await openTest();
    const error = new Error("transient read error");
    storage.readFault = { name: "entry", error, times: 1 };
    await expect(session.commit((tx) => tx.entry(2 as EntryId))).rejects.toBe(error);
    storage.readFault = { name: "findDocument", error, times: 1 };
    await expect(session.snapshot(Notes, ROOT)).rejects.toBe(error);
    expect(session.failed).toBeUndefined();
    await session.commit((tx) => tx.appendEntry(ROOT, { kind: "fine" }));
    await session.close();
  });
});

describe("session > close and cancellation", () => {
  it("close lets admitted commits settle, rejects what was not admitted, closes storage, is idempotent", async () => {
    const { session, storage } = await openTest();
    storage.commitDelayMs = 5;
    const admitted = session.commit((tx) => tx.appendEntry(ROOT, { kind: "admitted" }));
    const notAdmitted = session.commit((tx) => tx.appendEntry(ROOT, { kind: "late" }));
    const closing = session.close();
    expect(session.close()).toBe(closing);
    await expect(notAdmitted).rejects.toBeInstanceOf(SessionClosed);
    const entry = await admitted;
    await closing;
    await expect(session.commit(() => 1)).rejects.toBeInstanceOf(SessionClosed);
    await expect(storage.inner.entry(entry.id)).rejects.toThrow(); // storage closed
  });

  it("a signal cancels a commit before admission, never after", async () => {
    const { session, storage } = await openTest();
    storage.commitDelayMs = 5;
    const controller = new AbortController();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const running = session.commit(
      async (tx) => {
        await gate;
        return tx.appendEntry(ROOT, { kind: "running" });
      },
      { signal: controller.signal },
    );
    const waiting = session.commit((tx) => tx.appendEntry(ROOT, { kind: "cancelled" }), {
      signal: controller.signal,
    });
    controller.abort(new Error("stop"));
    release();
    await expect(waiting).rejects.toThrow("stop");
    expect((await running).kind).toBe("running");
    const pre = new AbortController();
    pre.abort(new Error("already"));
    await expect(session.commit(() => 1, { signal: pre.signal })).rejects.toThrow("already");
    const kinds = (await session.read.scanEntries({ conversationId: ROOT }, 10)).items.map(
      (e) => e.kind,
    );
    expect(kinds).toEqual(["running"]);
    await session.close();
  });
});
