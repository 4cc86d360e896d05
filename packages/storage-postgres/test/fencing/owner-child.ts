/**
 * A session owner in its own process, for the fencing test. It opens the
 * session with a short lease, commits one entry, says "ready", then commits
 * once more for every "commit" line on stdin and reports how each went.
 */
import { createInterface } from "node:readline";
import { Session, type ConversationId } from "@durably/core";
import { openPostgresStorage } from "../../src/index.js";

function report(message: object): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

const url = process.env.DURABLY_PG_URL;
const session = process.env.FENCING_SESSION;
if (!url || !session) throw new Error("owner-child needs DURABLY_PG_URL and FENCING_SESSION");
const storage = await openPostgresStorage({
  connectionString: url,
  session,
  leaseMs: Number(process.env.FENCING_LEASE_MS ?? 1000),
  owner: "first-owner",
});
const durable = await Session.open(storage);
let conversationId = 0 as ConversationId;
await durable.commit(async (tx) => {
  const conversation = await tx.createConversation({ ownership: { kind: "ownerless" } });
  conversationId = conversation.id;
  await tx.appendEntry(conversation.id, { kind: "first-owner", data: { n: 0 } });
});
report({ ready: true, conversationId });

let n = 0;
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() !== "commit") continue;
  n += 1;
  try {
    await durable.commit((tx) =>
      tx.appendEntry(conversationId, { kind: "first-owner", data: { n } }),
    );
    report({ result: "committed", n });
  } catch (error) {
    const e = error as Error & { code?: string; cause?: Error & { code?: string } };
    report({
      result: "failed",
      n,
      name: e.name,
      code: e.code,
      cause: e.cause ? { name: e.cause.name, code: e.cause.code, message: e.cause.message } : null,
    });
  }
}
