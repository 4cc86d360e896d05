/**
 * The child process of the "killed writer" fault (spawned by
 * sqlite-kill.ts): it runs the experiment on SQLite through a facade that
 * pauses inside the third save's SQL transaction, reports each step on file
 * descriptor 3, and waits there to be SIGKILLed. Reports are written with
 * `writeSync` so they reach the parent even though the thread then blocks.
 */
import { writeSync } from "node:fs";
import { Session } from "@durably/core";
import { BetterSqlite3Database, SqliteStorage } from "@durably/storage-sqlite";
import { createConversation, NOTES, saveNote } from "../experiment.js";
import { Notes } from "../notes.js";
import { readConversation } from "../readback.js";
import { PausingDatabase } from "./pausing-database.js";
import type { WriterReport } from "./writer-protocol.js";

const REPORT_FD = 3;

function report(message: WriterReport): void {
  writeSync(REPORT_FD, JSON.stringify(message) + "\n");
}

async function main(file: string): Promise<void> {
  const database = new PausingDatabase(BetterSqlite3Database.open(file), (changes) =>
    report({ type: "paused", changes }),
  );
  const storage = await SqliteStorage.open(database, { location: file });
  const session = await Session.open(storage);
  const conversationId = await createConversation(session);
  for (const note of NOTES) await saveNote(session, conversationId, note);
  report({ type: "ready", state: await readConversation(storage, conversationId) });
  database.arm();
  await session.commit(async (tx) => {
    const entry = await tx.appendEntry(conversationId, {
      kind: "note",
      data: "killed mid-transaction",
    });
    report({ type: "saving", entryId: entry.id });
    const notes = await tx.doc(Notes, conversationId);
    notes.text = "never committed";
  });
  // Reaching this line means the pause did not happen: the parent reports it.
  report({ type: "committed" });
  await session.close();
}

const file = process.argv[2];
if (file === undefined) {
  process.stderr.write("usage: sqlite-writer <sqlite file>\n");
  process.exit(2);
}
main(file).catch((error: unknown) => {
  process.stderr.write(
    `sqlite-writer: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
