// A conversation on the Session kernel: commit entries atomically, fork, read back.
// Run: node --conditions=@durably/source --import tsx apps/demo/examples/00-conversation.ts
import { ROOT_CONVERSATION_ID, Session } from "@durably/core";
import { MemoryStorage } from "@durably/storage-memory";

const session = await Session.open(new MemoryStorage());

// One commit, all or nothing: two entries in the root conversation.
const [question] = await session.commit(async (tx) => [
  await tx.appendEntry(ROOT_CONVERSATION_ID, { kind: "note", data: { text: "What is 2+2?" } }),
  await tx.appendEntry(ROOT_CONVERSATION_ID, { kind: "note", data: { text: "4" } }),
]);

// A failing callback leaves nothing behind.
await session
  .commit(async (tx) => {
    await tx.appendEntry(ROOT_CONVERSATION_ID, { kind: "note", data: { text: "half done" } });
    throw new Error("changed my mind");
  })
  .catch((error: Error) => console.log(`discarded: ${error.message}`));

// A fork sees the parent's entries up to the fork point.
const child = await session.commit((tx) =>
  tx.forkConversation(ROOT_CONVERSATION_ID, question.id, { ownership: { kind: "ownerless" } }),
);
await session.commit((tx) =>
  tx.appendEntry(child.id, { kind: "note", data: { text: "Let me think again." } }),
);

for (const id of [ROOT_CONVERSATION_ID, child.id]) {
  const page = await session.read.scanEntries({ conversationId: id, order: "ascending" }, 10);
  console.log(
    `conversation ${id}:`,
    page.items.map((e) => (e.data as { text: string }).text),
  );
}
await session.close();
