/**
 * WAL-switch child: `wal-switch-child.ts <path>` opens a new storage at
 * `path`, commits three entries, closes it and prints one JSON line:
 * `{"open":"resolved","committed":3,"header":[r,w],"wal":bool}` (the file
 * header's read/write versions after the commits: 2/2 in WAL mode, 1/1 in
 * rollback-journal mode; whether a `-wal` file existed before close), or
 * `{"open":"rejected","name":...,"code":...,"file":...,"cause":...,"message":...}`.
 * The parent runs it under strace, failing an fsync of the rollback journal
 * SQLite uses while it switches the new file to WAL.
 */
import { existsSync, readFileSync } from "node:fs";
import type { ConversationId, EntryId } from "@durably/core";
import { openSqliteStorage } from "../../src/index.js";

const [path] = process.argv.slice(2);
if (path === undefined) throw new Error("usage: wal-switch-child.ts <path>");
const report: Record<string, unknown> = {};
try {
  const storage = await openSqliteStorage(path);
  report.open = "resolved";
  let committed = 0;
  await storage.commit([[{ type: "conversation", value: { id: 1 as ConversationId } }]], () => {});
  for (let i = 0; i < 3; i++) {
    const id = (await storage.mintId()) as EntryId;
    const value = { id, conversationId: 1 as ConversationId, kind: "note", data: i };
    await storage.commit([[{ type: "entry", value }]], () => {});
    committed++;
  }
  report.committed = committed;
  const header = readFileSync(path).subarray(18, 20);
  report.header = [header[0], header[1]];
  report.wal = existsSync(`${path}-wal`);
  await storage.close();
} catch (error) {
  const e = error as Error & { code?: string; location?: { file?: string }; cause?: unknown };
  report.open = report.open ?? "rejected";
  report.name = e.name;
  report.code = e.code;
  report.file = e.location?.file;
  report.cause = (e.cause as { code?: string } | undefined)?.code;
  report.message = e.message;
}
process.stdout.write(`${JSON.stringify(report)}\n`);
