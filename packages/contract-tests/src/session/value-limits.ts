import {
  defineDoc,
  MAX_VALUE_BYTES,
  type Json,
  type Session,
  type TaskRecord,
} from "@durably/core";
import type { Check } from "../storage/support.js";
import { sessionScenario, type SessionRuleGroup } from "./api.js";
import type { FaultInjector } from "./faults.js";
import {
  entryKinds,
  firstElements,
  nameOf,
  nested,
  Notes,
  openSession,
  rejection,
  ROOT,
} from "./support.js";

/** A document whose `root` holds arbitrary JSON, to nest values inside it. */
const Tree = defineDoc<{ root: Json }>({
  kind: "conformance.tree",
  version: 1,
  scope: "conversation",
  initial: () => ({ root: null }),
});

/** A lowered size limit (a session option that may only lower it): kilobytes per case, not megabytes. */
const SMALL = { valueBytes: 64 * 1024, commitBytes: 512 * 1024 };

/** A string whose JSON text is exactly `bytes` (ASCII plus the quotes). */
const text = (bytes: number, fill = "v"): string => fill.repeat(bytes - 2);

/** A task definition for `createTask`: the checkpoint is the input. */
const Holder = {
  name: "conformance.holder",
  version: 1,
  initial: (input: Json) => input,
};

/**
 * After refused writes: no storage call was made since `calls`, the session
 * is not failed and commits on, and only the next commit's entry is stored.
 * Closes the session.
 */
async function checkRefusalsLeftNothing(
  session: Session,
  storage: FaultInjector,
  check: Check,
  calls: number,
): Promise<void> {
  check.equal(storage.commitCalls.length, calls, "storage.commit calls for the refusals");
  await session.commit((tx) => tx.appendEntry(ROOT, { kind: "after" }));
  check.equal(await entryKinds(storage), ["after"], "entries after the refusals");
  check.same(session.failed, undefined, "the session's failed state");
  await session.close();
}

export const valueLimits: SessionRuleGroup = {
  rule: "value limits",
  scenarios: [
    sessionScenario(
      "values nesting exactly 256 levels are stored and read back whole: entry data, submission content, task input, checkpoint and memo, a document",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        const deep = nested(256, "leaf");
        const { entry, submission, taskId } = await check.resolves(
          session.commit(async (tx) => {
            // The document's root object is level 1: its field may nest 255 more.
            (await tx.doc(Tree, ROOT)).root = nested(255, "leaf");
            return {
              entry: await tx.appendEntry(ROOT, { kind: "deep", data: deep }),
              submission: await tx.createSubmission(ROOT, { type: "write", content: deep }),
              taskId: await tx.createTask(Holder, deep, {
                ownership: { kind: "ownerless" },
                conversationId: ROOT,
              }),
            };
          }),
          "the commit of values 256 levels deep",
        );
        const task = (await storage.inner.task(taskId)) as TaskRecord;
        // A memo's value sits deepest in a stored record: the write carrying it nests the most.
        await check.resolves(
          session.commit((tx) =>
            tx.putTask({ ...task, memos: { step: { status: "done", value: deep } } }),
          ),
          "the commit of a task memo 256 levels deep",
        );
        check.equal(
          (await storage.inner.entry(entry.id))?.entry.data,
          deep,
          `entry ${entry.id} data read back by the storage`,
        );
        check.equal(
          (await storage.inner.submission(submission.id))?.content,
          deep,
          `submission ${submission.id} content read back by the storage`,
        );
        const stored = await storage.inner.task(taskId);
        check.equal(stored?.input, deep, `task ${taskId} input read back by the storage`);
        check.equal(
          stored?.memos,
          { step: { status: "done", value: deep } },
          `task ${taskId} memos read back by the storage`,
        );
        check.equal(
          await session.snapshot(Tree, ROOT),
          { root: nested(255, "leaf") },
          "the document 256 levels deep",
        );
        await session.close();
      },
    ),
    sessionScenario(
      "a value nesting 257 levels is refused with a TypeError naming the path, before any storage call, and the session stays usable",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        const calls = storage.commitCalls.length;
        const error = await rejection(
          session.commit((tx) => tx.appendEntry(ROOT, { kind: "too deep", data: nested(257) })),
        );
        check.equal(
          nameOf(error),
          "TypeError",
          `appending data 257 levels deep (${String(error)})`,
        );
        check.equal(
          (error as Error).message,
          `entry.data${firstElements(256)}: nesting deeper than 256 levels`,
          "the error names the first level beyond the limit",
        );
        const huge = await rejection(
          session.commit((tx) =>
            tx.createSubmission(ROOT, { type: "write", content: nested(100_000) }),
          ),
        );
        check.equal(
          nameOf(huge),
          "TypeError",
          `a value nested 100,000 levels is refused the same way, not by a stack overflow (${String(huge).slice(0, 200)})`,
        );
        await checkRefusalsLeftNothing(session, storage, check, calls);
      },
    ),
    sessionScenario(
      "a document counts as a whole: a value set 200 levels down may nest 56 more, 57 are refused naming the path",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        // Levels: the document object 1, root's arrays 2 to 200.
        await session.commit(async (tx) => {
          (await tx.doc(Tree, ROOT)).root = nested(199);
        });
        const innermost = (draft: { root: Json }): Json[] => {
          let node = draft.root as Json[];
          for (let i = 0; i < 198; i++) node = node[0] as Json[];
          return node;
        };
        await check.resolves(
          session.commit(async (tx) => {
            innermost(await tx.doc(Tree, ROOT))[0] = nested(56, "leaf");
          }),
          "setting a value 56 levels deep at depth 200 (a delta op carries it)",
        );
        const expected = { root: nested(199 + 56, "leaf") };
        const record = await storage.inner.findDocument(
          { kind: Tree.kind, scope: { kind: "conversation", conversationId: ROOT } },
          "current",
        );
        const stored = record ? await storage.inner.document(record.id, "current") : undefined;
        check.equal(
          stored?.value,
          expected,
          "the storage's materialised document (base plus delta)",
        );
        const calls = storage.commitCalls.length;
        const error = await rejection(
          session.commit(async (tx) => {
            innermost(await tx.doc(Tree, ROOT))[0] = nested(57);
          }),
        );
        check.equal(
          nameOf(error),
          "TypeError",
          `setting 57 levels at depth 200 (${String(error)})`,
        );
        check.equal(
          (error as Error).message,
          `${Tree.kind}.root${firstElements(255)}: nesting deeper than 256 levels`,
          "the error names the document path of the first level beyond the limit",
        );
        check.equal(storage.commitCalls.length, calls, "storage.commit calls for the refusal");
        check.equal(await session.snapshot(Tree, ROOT), expected, "the document after the refusal");
        await session.close();
      },
    ),
    sessionScenario(
      "values of exactly the size limit are stored and read back whole: entry data, submission content, task input and checkpoint, a document field",
      async ({ storage, check }) => {
        const session = await openSession(storage, check, { limits: SMALL });
        const fits = text(SMALL.valueBytes);
        // The document's whole value is one value too: its field holds a little less.
        const field = text(SMALL.valueBytes - 64, "d");
        const { entry, submission, taskId } = await check.resolves(
          session.commit(async (tx) => ({
            entry: await tx.appendEntry(ROOT, { kind: "fits", data: fits }),
            submission: await tx.createSubmission(ROOT, { type: "write", content: fits }),
            taskId: await tx.createTask(Holder, fits, {
              ownership: { kind: "ownerless" },
              conversationId: ROOT,
            }),
          })),
          `the commit of values of exactly ${SMALL.valueBytes} bytes of JSON text`,
        );
        await check.resolves(
          session.commit(async (tx) => {
            (await tx.doc(Tree, ROOT)).root = field;
          }),
          "the commit of a document field just within the limit",
        );
        const stored = await storage.inner.entry(entry.id);
        check.equal(
          (stored?.entry.data as string | undefined)?.length,
          fits.length,
          `entry ${entry.id} data length read back by the storage`,
        );
        check.ok(stored?.entry.data === fits, `entry ${entry.id} data read back whole`);
        check.ok(
          (await storage.inner.submission(submission.id))?.content === fits,
          `submission ${submission.id} content read back whole`,
        );
        const task = await storage.inner.task(taskId);
        check.ok(
          task?.input === fits && (task.state as { checkpoint?: Json }).checkpoint === fits,
          `task ${taskId} input and checkpoint read back whole`,
        );
        check.equal(await session.snapshot(Tree, ROOT), { root: field }, "the document");
        await session.close();
      },
    ),
    sessionScenario(
      "a value one byte over the size limit is refused with a TypeError naming the path and the size, before any storage call, and the session stays usable",
      async ({ storage, check }) => {
        const session = await openSession(storage, check, { limits: SMALL });
        const calls = storage.commitCalls.length;
        const over = text(SMALL.valueBytes + 1);
        const message = (path: string): string =>
          `${path}: ${SMALL.valueBytes + 1} bytes of JSON text, over the limit of ${SMALL.valueBytes} bytes per value`;
        const attempts: [string, Promise<unknown>][] = [
          ["entry.data", session.commit((tx) => tx.appendEntry(ROOT, { kind: "x", data: over }))],
          [
            "submission.content",
            session.commit((tx) => tx.createSubmission(ROOT, { type: "write", content: over })),
          ],
          [
            "task.input",
            session.commit((tx) =>
              tx.createTask(Holder, over, {
                ownership: { kind: "ownerless" },
                conversationId: ROOT,
              }),
            ),
          ],
          [
            `${Tree.kind}.root`,
            session.commit(async (tx) => {
              (await tx.doc(Tree, ROOT)).root = over;
            }),
          ],
        ];
        for (const [path, attempt] of attempts) {
          const error = await rejection(attempt);
          check.equal(
            nameOf(error),
            "TypeError",
            `writing ${path} over the limit (${String(error)})`,
          );
          check.equal((error as Error).message, message(path), `the error for ${path}`);
        }
        await checkRefusalsLeftNothing(session, storage, check, calls);
      },
    ),
    sessionScenario(
      "with the default limits, entry data of exactly MAX_VALUE_BYTES is stored and read back, and one byte more is refused before any storage call",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        const fits = text(MAX_VALUE_BYTES);
        const entry = await check.resolves(
          session.commit((tx) => tx.appendEntry(ROOT, { kind: "largest", data: fits })),
          `the commit of entry data of ${MAX_VALUE_BYTES} bytes of JSON text`,
        );
        const calls = storage.commitCalls.length;
        const error = await rejection(
          session.commit((tx) => tx.appendEntry(ROOT, { kind: "over", data: `${fits}v` })),
        );
        check.equal(nameOf(error), "TypeError", `entry data one byte over (${String(error)})`);
        check.equal(storage.commitCalls.length, calls, "storage.commit calls for the refusal");
        const stored = await storage.inner.entry(entry.id);
        check.ok(
          stored?.entry.data === fits,
          `entry ${entry.id} read back whole (length ${String((stored?.entry.data as string | undefined)?.length)}, expected ${fits.length})`,
        );
        check.equal(await entryKinds(storage), ["largest"], "entries");
        await session.close();
      },
      60_000,
    ),
    sessionScenario(
      "negative zero is stored as 0: every read gives 0, never -0",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        const entry = await session.commit(async (tx) => {
          (await tx.doc(Notes, ROOT)).items.push(-0);
          return tx.appendEntry(ROOT, { kind: "zero", data: { n: -0, list: [-0] } });
        });
        await session.commit(async (tx) => {
          (await tx.doc(Notes, ROOT)).items.push(-0); // a delta op carrying -0
        });
        const isZero = (value: unknown): boolean => Object.is(value, 0);
        const data = (await storage.inner.entry(entry.id))?.entry.data as
          { n?: unknown; list?: unknown[] } | undefined;
        check.ok(
          isZero(data?.n) && isZero(data?.list?.[0]),
          `entry ${entry.id} data read back by the storage is { n: 0, list: [0] } (n is ${Object.is(data?.n, -0) ? "-0" : String(data?.n)})`,
        );
        const record = await storage.inner.findDocument(
          { kind: Notes.kind, scope: { kind: "conversation", conversationId: ROOT } },
          "current",
        );
        const doc = record ? await storage.inner.document(record.id, "current") : undefined;
        const items = (doc?.value as { items?: unknown[] } | undefined)?.items ?? [];
        check.ok(
          items.length === 2 && items.every(isZero),
          `the document's items read back by the storage are [0, 0] (got ${items.map((n) => (Object.is(n, -0) ? "-0" : String(n))).join(", ")})`,
        );
        await session.close();
      },
    ),
  ],
};
