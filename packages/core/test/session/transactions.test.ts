import { describe, expect, it } from "vitest";
import {
  DraftRevoked,
  ReadAfterWrite,
  ROOT_CONVERSATION_ID as ROOT,
  UnknownRecord,
  type ConversationId,
  type EntryId,
  type SubmissionId,
  type TaskId,
  type Transaction,
} from "../../src/index.js";
import { Echo, Notes, openTest } from "../support/session.js";

describe("session > open", () => {
  it("creates the root conversation once, as the first commit of a new storage", async () => {
    const { session, storage } = await openTest();
    expect(await session.read.conversation(ROOT)).toEqual({ id: ROOT });
    expect(storage.seqs).toEqual([1]);
    await session.close();
  });
});

describe("session > transactions", () => {
  it("commits conversations, entries, tasks and submissions together and returns the callback's value", async () => {
    const { session } = await openTest();
    const result = await session.commit(async (tx) => {
      const c = await tx.createConversation({ ownership: { kind: "ownerless" } });
      const e = await tx.appendEntry(c.id, { kind: "note", data: { text: "hi" } });
      const t = await tx.createTask(
        Echo,
        { n: 1 },
        { ownership: { kind: "ownerless" }, conversationId: c.id },
      );
      const s = await tx.createSubmission(c.id, {
        type: "input",
        content: "hello",
        requestId: "r1",
      });
      return { c, e, t, s };
    });
    expect(await session.read.entry(result.e.id)).toEqual({ entry: result.e, commitSeq: 2 });
    expect(await session.read.task(result.t)).toEqual({
      id: result.t,
      conversationId: result.c.id,
      kind: "test.echo",
      version: 1,
      input: { n: 1 },
      background: false,
      abortRequested: false,
      state: { status: "pending", checkpoint: { phase: "start", input: { n: 1 } } },
    });
    expect((await session.read.submissionByRequest(result.c.id, "r1"))?.id).toBe(result.s.id);
    await session.close();
  });

  it("a callback sees earlier commits that are prepared but not yet stored", async () => {
    const { session, storage } = await openTest();
    storage.commitDelayMs = 20;
    const first = session.commit((tx) => tx.appendEntry(ROOT, { kind: "a" }));
    const second = session.commit(async (tx) => {
      const page = await tx.scanEntries({ conversationId: ROOT }, 10);
      return page.items.map((e) => e.kind);
    });
    await first;
    expect(await second).toEqual(["a"]);
    await session.close();
  });

  it("a table read after the first table write throws ReadAfterWrite; documents stay available", async () => {
    const { session } = await openTest();
    await expect(
      session.commit(async (tx) => {
        await tx.appendEntry(ROOT, { kind: "a" });
        const d = await tx.doc(Notes, ROOT);
        d.text = "still fine";
        await tx.entry(1 as EntryId);
      }),
    ).rejects.toBeInstanceOf(ReadAfterWrite);
    expect((await session.read.scanEntries({ conversationId: ROOT }, 10)).items).toEqual([]);
    expect(await session.snapshot(Notes, ROOT)).toBeUndefined();
    await session.close();
  });

  it("writes naming unknown records throw UnknownRecord naming the id", async () => {
    const { session } = await openTest();
    const attempts: [string, (tx: Transaction) => Promise<unknown>, RegExp][] = [
      ["append", (tx) => tx.appendEntry(999 as ConversationId, { kind: "x" }), /conversation 999/],
      [
        "fork parent",
        (tx) =>
          tx.forkConversation(999 as ConversationId, 5 as EntryId, {
            ownership: { kind: "ownerless" },
          }),
        /999/,
      ],
      [
        "fork point",
        (tx) => tx.forkConversation(ROOT, 998 as EntryId, { ownership: { kind: "ownerless" } }),
        /entry 998/,
      ],
      [
        "owner",
        (tx) => tx.createConversation({ ownership: { kind: "task", taskId: 997 as TaskId } }),
        /task 997/,
      ],
      [
        "task conv",
        (tx) =>
          tx.createTask(Echo, 1, {
            ownership: { kind: "ownerless" },
            conversationId: 996 as ConversationId,
          }),
        /996/,
      ],
      [
        "submission",
        (tx) => tx.createSubmission(995 as ConversationId, { type: "input", content: "x" }),
        /995/,
      ],
      ["place", (tx) => tx.placeSubmission(994 as SubmissionId, 1 as EntryId), /submission 994/],
      ["doc scope", (tx) => tx.doc(Notes, 993 as ConversationId), /conversation 993/],
    ];
    for (const [what, attempt, message] of attempts) {
      const failure = session.commit(attempt);
      await expect(failure, what).rejects.toBeInstanceOf(UnknownRecord);
      await expect(failure, what).rejects.toThrow(message);
    }
    expect(session.failed).toBeUndefined();
    await session.close();
  });

  it("a transaction that changes nothing writes nothing and consumes no seq", async () => {
    const { session, storage } = await openTest();
    const calls = storage.commitCalls.length;
    expect(await session.commit(async (tx) => (await tx.conversation(ROOT))?.id)).toBe(ROOT);
    expect(
      await session.commit(async (tx) => void (await tx.doc(Notes, ROOT)).text),
    ).toBeUndefined();
    expect(storage.commitCalls.length).toBe(calls + 1); // only the doc creation stored
    const seq = storage.seqs.at(-1);
    await session.commit(async (tx) => {
      const d = await tx.doc(Notes, ROOT);
      d.text = ""; // same value
    });
    expect(storage.seqs.at(-1)).toBe(seq);
    await session.close();
  });

  it("the transaction and its drafts are revoked when the callback settles", async () => {
    const { session } = await openTest();
    let kept: Transaction | undefined;
    let draft: { text: string } | undefined;
    await session.commit(async (tx) => {
      kept = tx;
      draft = await tx.doc(Notes, ROOT);
    });
    await expect(kept!.appendEntry(ROOT, { kind: "late" })).rejects.toBeInstanceOf(DraftRevoked);
    expect(() => (draft!.text = "late")).toThrow(DraftRevoked);
    await session.close();
  });

  it("rejects strict-JSON violations at the append with the path, before any I/O, and the session stays usable", async () => {
    const { session, storage } = await openTest();
    const calls = storage.commitCalls.length;
    await expect(
      session.commit((tx) => tx.appendEntry(ROOT, { kind: "x", data: { items: [1, 2, 3, NaN] } })),
    ).rejects.toThrow(new TypeError("entry.data.items[3]: NaN is not JSON"));
    await expect(
      session.commit((tx) => tx.appendEntry(ROOT, { kind: "x", data: [1, undefined] as never })),
    ).rejects.toThrow("entry.data[1]: undefined is not JSON");
    await expect(
      session.commit(async (tx) => {
        (await tx.doc(Notes, ROOT)).items.push(Infinity);
      }),
    ).rejects.toThrow("test.notes.items[0]: Infinity is not JSON");
    expect(storage.commitCalls.length).toBe(calls);
    const ok = await session.commit((tx) => tx.appendEntry(ROOT, { kind: "ok" }));
    expect((await session.read.entry(ok.id))?.entry.kind).toBe("ok");
    await session.close();
  });

  it("places and settles submissions, refusing to settle twice", async () => {
    const { session } = await openTest();
    const { s, e } = await session.commit(async (tx) => {
      const s = await tx.createSubmission(ROOT, { type: "input", content: "q" });
      const e = await tx.appendEntry(ROOT, { kind: "user" });
      return { s, e };
    });
    await session.commit((tx) => tx.placeSubmission(s.id, e.id));
    const done = await session.commit((tx) =>
      tx.settleSubmission(s.id, { status: "done", answer: e.id }),
    );
    expect(done).toMatchObject({ status: "done", entry: e.id, answer: e.id });
    await expect(
      session.commit((tx) => tx.settleSubmission(s.id, { status: "unanswered", reason: "x" })),
    ).rejects.toThrow(/already settled/);
    await session.close();
  });

  it("ids come from storage.mintId and are never reused", async () => {
    const { session } = await openTest();
    const ids = await session.commit(async (tx) => {
      const a = await tx.appendEntry(ROOT, { kind: "a" });
      const b = await tx.appendEntry(ROOT, { kind: "b" });
      const c = await tx.createConversation({ ownership: { kind: "ownerless" } });
      return [a.id, b.id, c.id];
    });
    expect(new Set(ids).size).toBe(3);
    expect(ids.every((id) => id > ROOT)).toBe(true);
    await session.close();
  });
});
