import type { ConversationId, DocumentId, EntryId, Seq, SubmissionId, TaskId } from "@durably/core";
import {
  commitOne,
  conversation,
  createDoc,
  entry,
  mintIds,
  ROOT,
  scenario,
  show,
  submission,
  task,
  withRoot,
  type RuleGroup,
} from "./support.js";

export const readYourCommit: RuleGroup = {
  rule: "read your commit",
  scenarios: [
    scenario(
      "every read and scan sees a commit as soon as it resolves",
      async ({ storage, check }) => {
        const [c, e, t, s, d] = await mintIds(storage, 5);
        const seq = await commitOne(check, storage, [
          conversation(ROOT),
          conversation(c!, { owner: { conversationId: ROOT, taskId: t as TaskId } }),
          entry(e!, ROOT, { head: e as EntryId }),
          task(t!, ROOT),
          submission(s!, ROOT, { requestId: "req" }),
          createDoc(d!, { v: 1 }, { kind: "k" }),
        ]);
        const seen = {
          conversation: (await storage.conversation(c as ConversationId))?.id,
          conversations: (
            await storage.scanConversations({ ownerTaskId: t as TaskId }, 10)
          ).items.map((x) => x.id),
          entry: (await storage.entry(e as EntryId))?.commitSeq,
          entries: (await storage.scanEntries({ conversationId: ROOT }, 10)).items.map((x) => x.id),
          latestHead: (await storage.latestHead(ROOT))?.id,
          task: (await storage.task(t as TaskId))?.id,
          tasks: (await storage.scanTasks({}, 10)).items.map((x) => x.id),
          submission: (await storage.submission(s as SubmissionId))?.id,
          submissions: (await storage.scanSubmissions({ conversationId: ROOT }, 10)).items.map(
            (x) => x.id,
          ),
          byRequest: (await storage.submissionByRequest(ROOT, "req"))?.id,
          found: (await storage.findDocument({ kind: "k", scope: { kind: "session" } }, "current"))
            ?.id,
          foundAtSeq: (
            await storage.findDocument({ kind: "k", scope: { kind: "session" } }, seq as Seq)
          )?.id,
          document: (await storage.document(d as DocumentId, "current"))?.value,
          documents: (
            await storage.scanDocuments({ scope: { kind: "session" }, at: "current" }, 10)
          ).items.map((x) => x.id),
        };
        check.equal(
          seen,
          {
            conversation: c,
            conversations: [c],
            entry: seq,
            entries: [e],
            latestHead: e,
            task: t,
            tasks: [t],
            submission: s,
            submissions: [s],
            byRequest: s,
            found: d,
            foundAtSeq: d,
            document: { v: 1 },
            documents: [d],
          },
          `reads right after the commit at seq ${seq}`,
        );
      },
    ),
    scenario(
      "concurrent commits are each visible once they resolve, each batch with its own seq",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const ids = await mintIds(storage, 6);
        const seqs = await Promise.all(
          ids.map((id) =>
            commitOne(check, storage, [entry(id, ROOT)], `concurrent commit of entry ${id}`),
          ),
        );
        check.same(
          new Set(seqs).size,
          ids.length,
          `distinct seqs for ${ids.length} concurrent commits, got ${show(seqs)}`,
        );
        for (const [i, id] of ids.entries())
          check.same(
            (await storage.entry(id as EntryId))?.commitSeq,
            seqs[i],
            `entry ${id} committed at seq ${seqs[i]}`,
          );
      },
    ),
    scenario("a read of an unknown id is undefined, not an error", async ({ storage, check }) => {
      await withRoot(check, storage);
      const [x] = await mintIds(storage, 1);
      const reads = {
        conversation: await storage.conversation(x as ConversationId),
        entry: await storage.entry(x as EntryId),
        task: await storage.task(x as TaskId),
        submission: await storage.submission(x as SubmissionId),
        byRequest: await storage.submissionByRequest(ROOT, "nobody"),
        latestHead: await storage.latestHead(x as ConversationId),
        findDocument: await storage.findDocument(
          { kind: "none", scope: { kind: "session" } },
          "current",
        ),
        document: await storage.document(x as DocumentId, "current"),
        documentAtSeq: await storage.document(x as DocumentId, 1 as Seq),
      };
      check.equal(
        reads,
        {
          conversation: undefined,
          entry: undefined,
          task: undefined,
          submission: undefined,
          byRequest: undefined,
          latestHead: undefined,
          findDocument: undefined,
          document: undefined,
          documentAtSeq: undefined,
        },
        `reads of unknown id ${x}`,
      );
    }),
  ],
};
