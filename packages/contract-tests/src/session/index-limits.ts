import {
  defineDoc,
  defineDocFamily,
  MAX_KEY_BYTES,
  MAX_KIND_BYTES,
  type Json,
  type Session,
  type SubmissionId,
  type TaskId,
} from "@durably/core";
import { sessionScenario, type SessionRuleGroup } from "./api.js";
import { FaultInjector } from "./faults.js";
import { entryKinds, nameOf, openSession, rejection, ROOT } from "./support.js";

/**
 * `fill` (whose JSON text is `size` bytes of UTF-8) repeated, then ASCII,
 * then `tail` (whose JSON text is `tailBytes`), for a string whose JSON text
 * is exactly `bytes` long, quotes included.
 */
function exactly(bytes: number, fill: string, size: number, tail = "", tailBytes = 0): string {
  const room = bytes - 2 - tailBytes;
  const count = Math.floor(room / size);
  return fill.repeat(count) + "a".repeat(room - count * size) + tail;
}

/** Escapes count as JSON writes them: `"` and `\` two bytes, a control character six. */
const ESCAPES = '"\\\u0001\n\u001f';
const ESCAPES_BYTES = 2 + 2 + 6 + 2 + 6;

/** The largest strings every backend must store, each exactly at its limit. */
const SINGLE_KIND = exactly(MAX_KIND_BYTES, "é", 2);
const FAMILY_KIND = exactly(MAX_KIND_BYTES, "漢", 3, ESCAPES, ESCAPES_BYTES);
const TASK_KIND = exactly(MAX_KIND_BYTES, "😀", 4);
const DOCUMENT_KEY = exactly(MAX_KEY_BYTES, "漢", 3, ESCAPES, ESCAPES_BYTES);
const REQUEST_ID = exactly(MAX_KEY_BYTES, "😀", 4, ESCAPES, ESCAPES_BYTES);

const Single = defineDoc<{ text: string }, "conversation">({
  kind: SINGLE_KIND,
  version: 1,
  scope: "conversation",
  initial: () => ({ text: "" }),
});

const Family = defineDocFamily<{ n: number }, "session", number>({
  kind: FAMILY_KIND,
  version: 1,
  scope: "session",
  initial: (n) => ({ n }),
});

const Holder = { name: TASK_KIND, version: 1, initial: (input: Json) => input };

/** What the scenario reads back, through a session and through the storage port. */
async function readBack(
  session: Session,
  storage: FaultInjector,
  ids: { taskId: TaskId; submissionId: SubmissionId },
): Promise<unknown> {
  const single = await storage.inner.findDocument(
    { kind: SINGLE_KIND, scope: { kind: "conversation", conversationId: ROOT } },
    "current",
  );
  const family = await storage.inner.findDocument(
    { kind: FAMILY_KIND, key: DOCUMENT_KEY, scope: { kind: "session" } },
    "current",
  );
  const task = await session.read.task(ids.taskId);
  const byRequest = await session.read.submissionByRequest(ROOT, REQUEST_ID);
  return {
    single: await session.snapshot(Single, ROOT),
    family: await session.snapshot(Family, null, DOCUMENT_KEY),
    singleRecord: single && { kind: single.kind, key: single.key },
    familyRecord: family && { kind: family.kind, key: family.key },
    taskKind: task?.kind,
    submission: byRequest && { id: byRequest.id, requestId: byRequest.requestId },
  };
}

export const indexLimits: SessionRuleGroup = {
  rule: "index limits",
  scenarios: [
    sessionScenario(
      "a document kind and key, a task kind and a submission requestId each exactly at its limit (MAX_KIND_BYTES, MAX_KEY_BYTES of JSON text, multibyte characters and escapes) are stored, changed, and read back after a reopen",
      async ({ storage, check, reopen }) => {
        check.equal(
          [SINGLE_KIND, FAMILY_KIND, TASK_KIND, DOCUMENT_KEY, REQUEST_ID].map(
            (s) => new TextEncoder().encode(JSON.stringify(s)).length,
          ),
          [MAX_KIND_BYTES, MAX_KIND_BYTES, MAX_KIND_BYTES, MAX_KEY_BYTES, MAX_KEY_BYTES],
          "the strings' sizes in bytes of JSON text",
        );
        let session = await openSession(storage, check);
        const ids = await check.resolves(
          session.commit(async (tx) => {
            (await tx.doc(Single, ROOT)).text = "single";
            (await tx.doc(Family, null, DOCUMENT_KEY, 1)).n += 1;
            const taskId = await tx.createTask(Holder, "input", {
              ownership: { kind: "ownerless" },
              conversationId: ROOT,
            });
            const submission = await tx.createSubmission(ROOT, {
              type: "write",
              content: "content",
              requestId: REQUEST_ID,
            });
            return { taskId, submissionId: submission.id };
          }),
          "the commit of a document, a task and a submission at the limits",
        );
        // Rows rewritten: a delta, a task replaced whole, a submission placed.
        await check.resolves(
          session.commit(async (tx) => {
            (await tx.doc(Family, null, DOCUMENT_KEY, 1)).n += 1;
            (await tx.doc(Single, ROOT)).text += "!";
            const task = await tx.task(ids.taskId);
            if (task) await tx.putTask({ ...task, abortRequested: true });
            const entry = await tx.appendEntry(ROOT, { kind: "placed" });
            await tx.placeSubmission(ids.submissionId, entry.id);
          }),
          "a second commit changing them",
        );
        check.same(session.failed, undefined, "the session's failed state");
        const expected = {
          single: { text: "single!" },
          family: { n: 3 },
          singleRecord: { kind: SINGLE_KIND, key: undefined },
          familyRecord: { kind: FAMILY_KIND, key: DOCUMENT_KEY },
          taskKind: TASK_KIND,
          submission: { id: ids.submissionId, requestId: REQUEST_ID },
        };
        check.equal(await readBack(session, storage, ids), expected, "read back before a reopen");
        await session.close();

        // A persistent backend is reopened (closing a session closes its storage): what it
        // stored is read back from its files or tables.
        if (reopen === undefined) return;
        const reopened = new FaultInjector(await reopen());
        session = await openSession(reopened, check);
        check.equal(await readBack(session, reopened, ids), expected, "read back after a reopen");
        await check.resolves(
          session.commit(async (tx) => {
            (await tx.doc(Family, null, DOCUMENT_KEY, 1)).n += 1;
          }),
          "a commit after the reopen",
        );
        check.equal(await session.snapshot(Family, null, DOCUMENT_KEY), { n: 4 }, "the family");
        await session.close();
      },
    ),
    sessionScenario(
      "one byte over a limit is refused with a TypeError naming the field and both sizes, before any storage call, and the session stays usable",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        const calls = storage.commitCalls.length;
        const message = (field: string, limit: number, bytes: number): string =>
          `${field}: ${bytes} bytes of JSON text, over the limit of ${limit} bytes`;
        const attempts: [string, Promise<unknown>][] = [
          [
            message("document key", MAX_KEY_BYTES, MAX_KEY_BYTES + 3),
            session.commit(async (tx) => {
              await tx.doc(Family, null, `漢${DOCUMENT_KEY}`, 1);
            }),
          ],
          [
            message("document kind", MAX_KIND_BYTES, MAX_KIND_BYTES + 1),
            session.commit(async (tx) => {
              const token = { ...Single, kind: `${SINGLE_KIND}a` } as typeof Single;
              await tx.doc(token, ROOT);
            }),
          ],
          [
            message("task.kind", MAX_KIND_BYTES, MAX_KIND_BYTES + 6),
            session.commit((tx) =>
              tx.createTask({ ...Holder, name: `\u0002${TASK_KIND}` }, null, {
                ownership: { kind: "ownerless" },
                conversationId: ROOT,
              }),
            ),
          ],
          [
            message("submission.requestId", MAX_KEY_BYTES, MAX_KEY_BYTES + 4),
            session.commit((tx) =>
              tx.createSubmission(ROOT, {
                type: "write",
                content: null,
                requestId: `😀${REQUEST_ID}`,
              }),
            ),
          ],
        ];
        for (const [expected, attempt] of attempts) {
          const error = await rejection(attempt);
          check.equal(nameOf(error), "TypeError", `${expected} (${String(error).slice(0, 200)})`);
          check.equal((error as Error).message, expected, "the error message");
        }
        check.equal(storage.commitCalls.length, calls, "storage.commit calls for the refusals");
        await session.commit((tx) => tx.appendEntry(ROOT, { kind: "after" }));
        check.equal(await entryKinds(storage), ["after"], "entries after the refusals");
        check.same(session.failed, undefined, "the session's failed state");
        await session.close();
      },
    ),
  ],
};
