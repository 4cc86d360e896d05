/**
 * `commit-then-hold.ts <path> <n>`: opens the storage at `path` (already
 * created, with conversation 1), commits entries 1000 … 1000+n-1 one call
 * each, prints `committed <n>` and waits to be killed: every commit is
 * acknowledged and still in the WAL when the process dies.
 */
import type { ConversationId, EntryId } from "@durably/core";
import { openSqliteStorage } from "../../src/index.js";

const [path, count] = process.argv.slice(2);
if (path === undefined || count === undefined) throw new Error("usage: <path> <n>");
const storage = await openSqliteStorage(path);
for (let i = 0; i < Number(count); i++) {
  const value = {
    id: (1000 + i) as EntryId,
    conversationId: 1 as ConversationId,
    kind: "note",
    data: `commit ${i} `.padEnd(3000, "x"),
  };
  await storage.commit([[{ type: "entry", value }]], () => {});
}
process.stdout.write(`committed ${count}\n`);
setInterval(() => undefined, 60_000);
