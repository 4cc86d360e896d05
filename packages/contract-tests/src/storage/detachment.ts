import type {
  ConversationId,
  DocumentId,
  EntryId,
  Json,
  StorageWrite,
  SubmissionId,
  TaskId,
} from "@durably/core";
import {
  commitOne,
  conversation,
  createDoc,
  delta,
  entry,
  mintIds,
  ROOT,
  scenario,
  submission,
  task,
  withRoot,
  type RuleGroup,
} from "./support.js";

/** Reaches into a write's nested value to mutate it. */
function field(write: StorageWrite, key: string): Record<string, Json> {
  return (write as unknown as Record<string, Record<string, Record<string, Json>>>)[
    key
  ] as unknown as Record<string, Json>;
}

export const detachment: RuleGroup = {
  rule: "detachment",
  scenarios: [
    scenario(
      "mutating written objects right after commit is called, or after it resolves, changes nothing stored",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [e, t, s, d] = await mintIds(storage, 4);
        const entryWrite = entry(e!, ROOT, { data: { items: [1, 2] } });
        const taskWrite = task(t!, ROOT, { input: { deep: { n: 1 } } });
        const submissionWrite = submission(s!, ROOT, { content: { text: "a" } });
        const docWrite = createDoc(d!, { list: [1] });
        const batch = [entryWrite, taskWrite, submissionWrite, docWrite];
        const pending = storage.commit([batch], () => undefined);
        // Mutate before the commit's promise settles: the storage must have copied already.
        ((field(entryWrite, "value").data as Record<string, Json[]>).items as Json[]).push(3);
        (field(taskWrite, "value").input as Record<string, Record<string, Json>>).deep!.n = 2;
        field(submissionWrite, "value").content = "changed";
        ((field(docWrite, "content").value as Record<string, Json[]>).list as Json[]).push(2);
        batch.push(entry(e! + 1000, ROOT));
        const result = await pending;
        check.same(result.stored, 1, "the batch is stored");
        field(entryWrite, "value").kind = "after";
        const ops: ["s", string[], Json][] = [["s", ["list"], [9]]];
        const deltaWrite = delta(d!, 1, ...ops);
        const pendingDelta = storage.commit([[deltaWrite]], () => undefined);
        ops[0]![2] = [666];
        ops.push(["s", ["list"], [667]]);
        await pendingDelta;
        check.equal(
          (await storage.entry(e as EntryId))?.entry,
          { id: e, conversationId: ROOT, kind: "message", data: { items: [1, 2] } },
          `entry ${e}`,
        );
        check.equal(
          (await storage.task(t as TaskId))?.input,
          { deep: { n: 1 } },
          `task ${t} input`,
        );
        check.equal(
          (await storage.submission(s as SubmissionId))?.content,
          { text: "a" },
          `submission ${s} content`,
        );
        check.equal(
          (await storage.document(d as DocumentId, "current"))?.value,
          { list: [9] },
          `document ${d} after a delta whose ops were mutated`,
        );
        check.equal(
          await storage.entry((e! + 1000) as EntryId),
          undefined,
          "a write pushed into the batch after commit was called",
        );
      },
    ),
    scenario(
      "mutating values returned by reads and scans changes nothing stored",
      async ({ storage, check }) => {
        const [c, e, t, s, d] = await mintIds(storage, 5);
        await commitOne(check, storage, [
          conversation(ROOT),
          conversation(c!, { owner: { conversationId: ROOT, taskId: t as TaskId } }),
          entry(e!, ROOT, { data: { n: 1 } }),
          task(t!, ROOT),
          submission(s!, ROOT, { requestId: "r" }),
          createDoc(d!, { n: 1 }, { kind: "k" }),
        ]);
        const snapshot = async () => ({
          conversation: await storage.conversation(c as ConversationId),
          conversations: await storage.scanConversations({}, 10),
          entry: await storage.entry(e as EntryId),
          entries: await storage.scanEntries({ conversationId: ROOT }, 10),
          head: await storage.latestHead(ROOT),
          task: await storage.task(t as TaskId),
          tasks: await storage.scanTasks({}, 10),
          submission: await storage.submission(s as SubmissionId),
          submissions: await storage.scanSubmissions({ conversationId: ROOT }, 10),
          byRequest: await storage.submissionByRequest(ROOT, "r"),
          found: await storage.findDocument({ kind: "k", scope: { kind: "session" } }, "current"),
          document: await storage.document(d as DocumentId, "current"),
          documents: await storage.scanDocuments({ scope: { kind: "session" }, at: "current" }, 10),
        });
        const first = await snapshot();
        const expected = JSON.parse(JSON.stringify(first)) as unknown;
        // Vandalise everything that came back.
        const vandalise = (value: unknown): void => {
          if (typeof value !== "object" || value === null) return;
          if (Array.isArray(value)) {
            for (const item of value) vandalise(item);
            value.push("junk");
            return;
          }
          const record = value as Record<string, unknown>;
          for (const key of Object.keys(record)) {
            vandalise(record[key]);
            if (typeof record[key] !== "object" || record[key] === null) record[key] = "junk";
          }
          record.extra = "junk";
        };
        vandalise(first);
        check.equal(
          await snapshot(),
          expected,
          "every read after mutating the values of earlier reads",
        );
      },
    ),
  ],
};
