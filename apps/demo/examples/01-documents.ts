// Documents: drafts record ops, deltas are stored, watchers see each change, deferred progress coalesces.
// Run: node --conditions=@durably/source --import tsx apps/demo/examples/01-documents.ts
import { defineDoc, ROOT_CONVERSATION_ID, Session } from "@durably/core";
import { MemoryStorage } from "@durably/storage-memory";

const Notes = defineDoc<{ title: string; lines: string[] }>({
  kind: "demo.notes",
  version: 1,
  scope: "conversation",
  history: "rewindable",
  initial: () => ({ title: "", lines: [] }),
});

const storage = new MemoryStorage();
const session = await Session.open(storage);
session.watchDoc(Notes, ROOT_CONVERSATION_ID, (value, ops) =>
  console.log("watch:", JSON.stringify(ops), "->", value?.lines.length, "lines"),
);
session.subscribeCommits((e) =>
  console.log(`stored seq ${e.seq}:`, e.writes.map((w) => w.type).join(", ")),
);

const marker = await session.commit(async (tx) => {
  const notes = await tx.doc(Notes, ROOT_CONVERSATION_ID); // created: stored as a base
  notes.title = "Groceries";
  notes.lines.push("milk");
  return tx.appendEntry(ROOT_CONVERSATION_ID, { kind: "note" });
});
await session.commit(async (tx) => {
  const notes = await tx.doc(Notes, ROOT_CONVERSATION_ID); // changed: stored as a delta of ops
  notes.lines.push("eggs");
  notes.title += " (weekend)";
});

// Streaming progress: published at once, stored later as one coalesced batch.
for (const word of ["bread", " and", " butter"]) {
  await session.commit(
    async (tx) => {
      const notes = await tx.doc(Notes, ROOT_CONVERSATION_ID);
      if (word === "bread") notes.lines.push(word);
      else notes.lines[notes.lines.length - 1] += word;
    },
    { durability: "deferred" },
  );
}

console.log("now:", await session.snapshot(Notes, ROOT_CONVERSATION_ID));
console.log(
  "as of the first note:",
  await session.snapshotAsOf(Notes, ROOT_CONVERSATION_ID, marker.id),
);
await session.close();
