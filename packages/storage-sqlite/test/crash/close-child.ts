/**
 * Close-fault child: `close-child.ts <path> <commits>` opens the storage at
 * `path` (already created), commits one entry per call, then closes it and
 * prints one JSON line: `{"committed":n,"close":"resolved"}` or
 * `{"committed":n,"close":"rejected","name":...,"code":...,"cause":...,"file":...}`.
 * The parent runs it under strace with faults injected on the database file.
 */
import type { ConversationId, EntryId } from "@durably/core";
import { openSqliteStorage } from "../../src/index.js";

const [path, count] = process.argv.slice(2);
if (path === undefined || count === undefined) throw new Error("usage: close-child.ts <path> <n>");
const storage = await openSqliteStorage(path);
let committed = 0;
for (let i = 0; i < Number(count); i++) {
  const id = (await storage.mintId()) as EntryId;
  const value = { id, conversationId: 1 as ConversationId, kind: "note", data: `commit ${i}` };
  await storage.commit([[{ type: "entry", value }]], () => {});
  committed++;
}
const report: Record<string, unknown> = { committed };
try {
  await storage.close();
  report.close = "resolved";
} catch (error) {
  const e = error as Error & { code?: string; location?: { file?: string }; cause?: unknown };
  report.close = "rejected";
  report.name = e.name;
  report.code = e.code;
  report.file = e.location?.file;
  report.cause = (e.cause as { code?: string } | undefined)?.code;
  report.message = e.message;
}
process.stdout.write(`${JSON.stringify(report)}\n`);
