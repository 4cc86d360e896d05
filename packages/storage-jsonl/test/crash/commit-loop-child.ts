/**
 * Child process for the SIGKILL test: opens the storage at argv[2] (fsync
 * when argv[3] is "fsync") and commits in a loop until killed. Each commit
 * writes, in one batch, an entry for step n, a delta setting the counter
 * document to n (a base every tenth step), and the task's checkpoint n. After each acknowledged commit
 * it prints `ack <step> <seq> <entryId>`.
 */
import type { ConversationId, DocumentId, EntryId, Seq, TaskId } from "@durably/core";
import { openJsonlStorage } from "../../src/index.js";

const CONVERSATION = 1 as ConversationId;
const COUNTER = 2 as DocumentId;
const TASK = 3 as TaskId;

const [path, mode] = process.argv.slice(2);
const storage = await openJsonlStorage(path as string, { fsync: mode === "fsync" });
const counter = await storage.document(COUNTER, "current");
let step: number;
if (counter === undefined) {
  const result = await storage.commit(
    [
      [
        { type: "conversation", value: { id: CONVERSATION } },
        {
          type: "document.create",
          record: {
            id: COUNTER,
            kind: "crash.counter",
            scope: { kind: "conversation", conversationId: CONVERSATION },
          },
          content: { kind: "base", version: 1, value: { step: 0, entryId: 0 } },
        },
      ],
    ],
    () => undefined,
  );
  if (result.refused) throw result.refused;
  step = 1;
} else step = ((counter.value as { step: number }).step ?? 0) + 1;
process.stdout.write(`ready ${step}\n`);

for (;;) {
  const entryId = (await storage.mintId()) as EntryId;
  let seq = 0;
  const result = await storage.commit(
    [
      [
        {
          type: "entry",
          value: { id: entryId, conversationId: CONVERSATION, kind: "crash.step", data: { step } },
        },
        {
          type: "document.change",
          id: COUNTER,
          // Every tenth step stores a base, so kills also land in the reclamation that follows it.
          content:
            step % 10 === 0
              ? { kind: "base", version: 1, value: { step, entryId } }
              : { kind: "delta", version: 1, ops: [["r", { step, entryId }]] },
        },
        {
          type: "task",
          value: {
            id: TASK,
            conversationId: CONVERSATION,
            kind: "crash.task",
            version: 1,
            input: null,
            background: false,
            abortRequested: false,
            state: { status: "running", checkpoint: { step, entryId } },
          },
        },
      ],
    ],
    (_i, s: Seq) => (seq = s),
  );
  if (result.refused) throw result.refused;
  process.stdout.write(`ack ${step} ${seq} ${entryId}\n`);
  step++;
}
