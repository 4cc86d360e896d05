import { describe, expect, it } from "vitest";
import {
  defineDoc,
  ROOT_CONVERSATION_ID as ROOT,
  type Json,
  type TaskId,
  type TaskRecord,
} from "../../src/index.js";
import { Echo, Notes, openTest } from "../support/session.js";

/** `levels` arrays around `leaf`: nested(0) is the leaf, nested(2) is [[leaf]]. Built without recursion. */
function nested(levels: number, leaf: Json = 0): Json {
  let value: Json = leaf;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

/** `levels` objects `{ a: ... }` around `leaf`. */
function nestedObjects(levels: number, leaf: Json = 0): Json {
  let value: Json = leaf;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

const indexes = (n: number): string => "[0]".repeat(n);

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

const Tree = defineDoc<{ root: Json }>({
  kind: "test.tree",
  version: 1,
  scope: "conversation",
  initial: () => ({ root: null }),
});

describe("session > nesting depth is limited to 256 levels at the boundary", () => {
  it("accepts entry data exactly 256 levels deep and reads it back", async () => {
    const { session } = await openTest();
    const entry = await session.commit((tx) =>
      tx.appendEntry(ROOT, { kind: "deep", data: nested(256, "leaf") }),
    );
    expect((await session.read.entry(entry.id))?.entry.data).toEqual(nested(256, "leaf"));
    await session.close();
  });

  it("refuses entry data 257 levels deep with a TypeError naming the path, before any storage call", async () => {
    const { session, storage } = await openTest();
    const calls = storage.commitCalls.length;
    const error = await rejectionOf(
      session.commit((tx) => tx.appendEntry(ROOT, { kind: "deep", data: nested(257) })),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(
      `entry.data${indexes(256)}: nesting deeper than 256 levels`,
    );
    const objects = await rejectionOf(
      session.commit((tx) => tx.appendEntry(ROOT, { kind: "deep", data: nestedObjects(300) })),
    );
    expect((objects as Error).message).toBe(
      `entry.data${".a".repeat(256)}: nesting deeper than 256 levels`,
    );
    expect(storage.commitCalls.length).toBe(calls);
    await session.commit((tx) => tx.appendEntry(ROOT, { kind: "after" }));
    expect(session.failed).toBeUndefined();
    await session.close();
  });

  it("refuses values nested thousands of levels deep with the TypeError, never a stack overflow", async () => {
    const { session } = await openTest();
    const deep = nested(100_000);
    for (const attempt of [
      () => session.commit((tx) => tx.appendEntry(ROOT, { kind: "deep", data: deep })),
      () => session.commit((tx) => tx.appendEntry(ROOT, { kind: "deep", model: [deep] as never })),
      () => session.commit((tx) => tx.createSubmission(ROOT, { type: "write", content: deep })),
      () =>
        session.commit(async (tx) => {
          (await tx.doc(Tree, ROOT)).root = deep;
        }),
    ]) {
      const error = await rejectionOf(attempt());
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(/: nesting deeper than 256 levels$/);
    }
    await session.close();
  });

  it("counts the entry's model and edits like its data", async () => {
    const { session } = await openTest();
    const error = await rejectionOf(
      session.commit((tx) => tx.appendEntry(ROOT, { kind: "deep", model: nested(257) as never })),
    );
    expect((error as Error).message).toBe(
      `entry.model${indexes(256)}: nesting deeper than 256 levels`,
    );
    await session.close();
  });

  it("refuses a task input or initial checkpoint 257 levels deep, and accepts 256", async () => {
    const { session } = await openTest();
    const create = (input: Json) =>
      session.commit((tx) =>
        tx.createTask(Echo, input, { ownership: { kind: "ownerless" }, conversationId: ROOT }),
      );
    const input = await rejectionOf(create(nested(257)));
    expect((input as Error).message).toBe(
      `task.input${indexes(256)}: nesting deeper than 256 levels`,
    );
    // Echo's checkpoint is { phase, input }: the input sits one level down in it.
    const checkpoint = await rejectionOf(create(nested(256)));
    expect((checkpoint as Error).message).toBe(
      `task.checkpoint.input${indexes(255)}: nesting deeper than 256 levels`,
    );
    const id = await create(nested(255));
    expect((await session.read.task(id))?.input).toEqual(nested(255));
    await session.close();
  });

  it("counts a task record's input, checkpoint, outcome and each memo value on their own in putTask", async () => {
    const { session } = await openTest();
    const id: TaskId = await session.commit((tx) =>
      tx.createTask(Echo, 1, { ownership: { kind: "ownerless" }, conversationId: ROOT }),
    );
    const task = (await session.read.task(id)) as TaskRecord;
    const put = (record: TaskRecord) => session.commit((tx) => tx.putTask(record));
    // 256 levels in every value: accepted although the record nests deeper.
    await put({
      ...task,
      input: nested(256),
      state: { status: "running", checkpoint: nested(256) },
      memos: { step: { status: "done", value: nested(256) } },
    });
    expect((await session.read.task(id))?.memos).toEqual({
      step: { status: "done", value: nested(256) },
    });
    const cases: [TaskRecord, string][] = [
      [{ ...task, input: nested(257) }, `task.input${indexes(256)}`],
      [{ ...task, input: nested(5000) }, `task.input${indexes(256)}`],
      [
        { ...task, state: { status: "running", checkpoint: nested(257) } },
        `task.state.checkpoint${indexes(256)}`,
      ],
      [
        {
          ...task,
          state: { status: "terminal", outcome: { kind: "completed", value: nested(256) } },
        },
        `task.state.outcome.value${indexes(255)}`,
      ],
      [
        { ...task, memos: { step: { status: "done", value: nested(257) } } },
        `task.memos.step.value${indexes(256)}`,
      ],
    ];
    for (const [record, path] of cases) {
      const error = await rejectionOf(put(record));
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toBe(`${path}: nesting deeper than 256 levels`);
    }
    expect(session.failed).toBeUndefined();
    await session.close();
  });

  it("refuses submission content and an unanswered detail 257 levels deep", async () => {
    const { session } = await openTest();
    const content = await rejectionOf(
      session.commit((tx) => tx.createSubmission(ROOT, { type: "write", content: nested(257) })),
    );
    expect((content as Error).message).toBe(
      `submission.content${indexes(256)}: nesting deeper than 256 levels`,
    );
    const submission = await session.commit((tx) =>
      tx.createSubmission(ROOT, { type: "write", content: nested(256) }),
    );
    const detail = await rejectionOf(
      session.commit((tx) =>
        tx.settleSubmission(submission.id, {
          status: "unanswered",
          reason: "deep",
          detail: nested(257),
        }),
      ),
    );
    expect((detail as Error).message).toBe(
      `submission.detail${indexes(256)}: nesting deeper than 256 levels`,
    );
    await session.close();
  });

  it("counts a document as a whole: a value assigned 200 levels down may nest 56 more", async () => {
    const { session, storage } = await openTest();
    await session.commit(async (tx) => {
      // The document's root object is level 1, root's array level 2, ... the innermost array level 200.
      (await tx.doc(Tree, ROOT)).root = nested(199, 0);
    });
    const at = (draft: { root: Json }): Json[] => {
      let node = draft.root as Json[];
      for (let i = 0; i < 198; i++) node = node[0] as Json[];
      return node;
    };
    await session.commit(async (tx) => {
      at(await tx.doc(Tree, ROOT))[0] = nested(56);
    });
    const stored = (await session.snapshot(Tree, ROOT)) as { root: Json };
    expect(stored.root).toEqual(nested(199 + 56));
    const calls = storage.commitCalls.length;
    const error = await rejectionOf(
      session.commit(async (tx) => {
        at(await tx.doc(Tree, ROOT))[0] = nested(57);
      }),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(
      `test.tree.root${indexes(255)}: nesting deeper than 256 levels`,
    );
    const pushed = await rejectionOf(
      session.commit(async (tx) => {
        at(await tx.doc(Tree, ROOT)).push(nested(57));
      }),
    );
    expect((pushed as Error).message).toBe(
      `test.tree.root${indexes(198)}[1]${indexes(56)}: nesting deeper than 256 levels`,
    );
    expect(storage.commitCalls.length).toBe(calls);
    expect(await session.snapshot(Tree, ROOT)).toEqual(stored);
    await session.close();
  });

  it("refuses a replaced document value, an initial value or a migrated value 257 levels deep", async () => {
    const { session } = await openTest();
    const replaced = await rejectionOf(
      session.commit(async (tx) => {
        tx.replaceDoc(await tx.doc(Tree, ROOT), { root: nested(256) });
      }),
    );
    expect((replaced as Error).message).toBe(
      `test.tree.root${indexes(255)}: nesting deeper than 256 levels`,
    );
    const DeepInitial = defineDoc<{ root: Json }>({
      kind: "test.deep-initial",
      version: 1,
      scope: "session",
      initial: () => ({ root: nested(256) }),
    });
    const initial = await rejectionOf(session.commit((tx) => tx.doc(DeepInitial, null)));
    expect((initial as Error).message).toBe(
      `test.deep-initial (initial).root${indexes(255)}: nesting deeper than 256 levels`,
    );
    const V1 = defineDoc<{ root: Json }>({
      kind: "test.migrating",
      version: 1,
      scope: "session",
      initial: () => ({ root: 1 }),
    });
    await session.commit(async (tx) => void (await tx.doc(V1, null)));
    const V2 = defineDoc<{ root: Json }>({
      kind: "test.migrating",
      version: 2,
      scope: "session",
      initial: () => ({ root: 1 }),
      migrate: () => ({ root: nested(256) }),
    });
    const migrated = await rejectionOf(session.commit((tx) => tx.doc(V2, null)));
    expect(migrated).toBeInstanceOf(TypeError);
    expect((migrated as Error).message).toMatch(/: nesting deeper than 256 levels$/);
    expect(session.failed).toBeUndefined();
    await session.close();
  });
});

describe("session > negative zero", () => {
  it("is stored and read back as 0 in entries, tasks, submissions and documents", async () => {
    const { session } = await openTest();
    const { entry, taskId, submission } = await session.commit(async (tx) => {
      (await tx.doc(Notes, ROOT)).items.push(-0);
      return {
        entry: await tx.appendEntry(ROOT, { kind: "zero", data: { n: -0, list: [-0] } }),
        taskId: await tx.createTask(Echo, -0, {
          ownership: { kind: "ownerless" },
          conversationId: ROOT,
        }),
        submission: await tx.createSubmission(ROOT, { type: "write", content: -0 }),
      };
    });
    const data = (await session.read.entry(entry.id))?.entry.data as { n: number; list: number[] };
    expect(Object.is(data.n, 0)).toBe(true);
    expect(Object.is(data.list[0], 0)).toBe(true);
    expect(Object.is((entry.data as { n: number }).n, 0)).toBe(true);
    expect(Object.is((await session.read.task(taskId))?.input, 0)).toBe(true);
    expect(Object.is((await session.read.submission(submission.id))?.content, 0)).toBe(true);
    const notes = await session.snapshot(Notes, ROOT);
    expect(Object.is(notes?.items[0], 0)).toBe(true);
    await session.commit(async (tx) => {
      (await tx.doc(Notes, ROOT)).items[0] = -0;
      (await tx.doc(Notes, ROOT)).items.push(-0);
    });
    const after = await session.snapshot(Notes, ROOT);
    expect(after?.items.every((n) => Object.is(n, 0))).toBe(true);
    await session.close();
  });
});
