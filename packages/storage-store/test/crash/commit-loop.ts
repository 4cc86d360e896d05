// Child of crash.test.ts: commits forever through a Session on classic-level at argv[2]. Each
// commit appends one entry and changes one document (a delta; a base every 16th change, which
// reclaims older revisions); 1 to 4 saves run at once so group commit shares storage calls. After
// each commit resolves it prints "ack <seq> <entry id> <step>". The parent SIGKILLs it.
import { ROOT_CONVERSATION_ID, Session, defineDoc, type EntryRecord } from "@durably/core";
import { open } from "./open-child.js";

export const Counter = defineDoc<{ step: number; text: string }>({
  kind: "crash.counter",
  version: 1,
  scope: "session",
  initial: () => ({ step: 0, text: "" }),
  checkpointWhen: (_value, _ops, { deltasSinceBase }) => deltasSinceBase >= 15,
});

const session = await Session.open(await open(process.argv[2] as string));
let random = Number(process.argv[3] ?? 1) >>> 0;
const next = () => {
  random = (Math.imul(random ^ (random >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
  return random / 2 ** 32;
};

// The seq of each stored batch, by the entry it carries (subscribers hear of a batch once stored).
const seqOf = new Map<number, number>();
session.subscribeCommits((event) => {
  for (const write of event.writes)
    if (write.type === "entry") seqOf.set(write.value.id, event.seq);
});

let step = (await session.snapshot(Counter, null))?.step ?? 0;
process.stdout.write("ready\n");

const save = () =>
  session.commit(async (tx) => {
    const mine = ++step;
    const pad = "x".repeat(Math.floor(next() * 2000));
    const entry: EntryRecord = await tx.appendEntry(ROOT_CONVERSATION_ID, {
      kind: "step",
      data: { step: mine, pad },
    });
    const counter = await tx.doc(Counter, null);
    counter.step = mine;
    counter.text += `.${mine}`;
    return { id: entry.id, step: mine };
  });

for (;;) {
  const saves = Array.from({ length: 1 + Math.floor(next() * 4) }, save);
  for (const done of saves) {
    const { id, step: mine } = await done;
    // stdout is a pipe: on Linux the write is synchronous, so a printed ack reaches the parent.
    process.stdout.write(`ack ${seqOf.get(id) ?? 0} ${id} ${mine}\n`);
  }
}
