import { spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { extname, join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { EntryId } from "@durably/core";
import { BACKENDS } from "../backends.js";
import { readConversation, type ConversationState } from "../readback.js";
import { parseReport, type WriterReport } from "./writer-protocol.js";

export interface KilledWriterOutcome {
  file: string;
  /** What storage held after the two acknowledged saves, as the child read it. */
  before: ConversationState;
  attemptedEntryId: EntryId | undefined;
  /** Rows the paused transaction had changed when the child was killed. */
  changesInFlight: number | undefined;
  /** How the child ended: "SIGKILL" when killed as planned. */
  signal: NodeJS.Signals | null;
  exitCode: number | null;
  reports: WriterReport["type"][];
  reopened: ConversationState;
  attemptedEntryStored: boolean;
  /** The child's stderr, shown when a claim fails. */
  stderr: string;
}

const PAUSE_TIMEOUT_MS = 30_000;

/** The child runs as the same kind of file as this one: built `.js`, or `.ts` under tsx. */
function writerPath(): string {
  const here = fileURLToPath(import.meta.url);
  return join(here, "..", `sqlite-writer${extname(here)}`);
}

/**
 * Kills a SQLite writer in the middle of its transaction: a child process
 * runs two saves, then pauses inside the third save's SQL transaction (via
 * its facade) and is SIGKILLed there. The parent then reopens the file.
 */
export async function killWriterMidTransaction(dir: string): Promise<KilledWriterOutcome> {
  await mkdir(dir, { recursive: true });
  const file = BACKENDS.sqlite.location(dir);
  const child = spawn(process.execPath, [...process.execArgv, writerPath(), file], {
    stdio: ["ignore", "ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const reports: WriterReport[] = [];
  const channel = createInterface({ input: child.stdio[3] as Readable });
  const timer = setTimeout(() => child.kill("SIGKILL"), PAUSE_TIMEOUT_MS);
  try {
    for await (const line of channel) {
      const report = parseReport(line);
      reports.push(report);
      if (report.type === "paused") {
        // The transaction is open with its writes done: die now, as a crash would.
        child.kill("SIGKILL");
        break;
      }
    }
  } finally {
    clearTimeout(timer);
    channel.close();
  }
  const { code, signal } = await exited;
  const ready = reports.find((r) => r.type === "ready");
  if (ready === undefined) {
    throw new Error(
      `the SQLite writer ended (code ${code}, signal ${signal}) before its two saves:\n${stderr}`,
    );
  }
  const saving = reports.find((r) => r.type === "saving");
  const paused = reports.find((r) => r.type === "paused");

  const storage = await BACKENDS.sqlite.open(dir);
  try {
    const reopened = await readConversation(storage, ready.state.conversationId);
    return {
      file,
      before: ready.state,
      attemptedEntryId: saving?.entryId,
      changesInFlight: paused?.changes,
      signal,
      exitCode: code,
      reports: reports.map((r) => r.type),
      reopened,
      attemptedEntryStored:
        saving !== undefined && (await storage.entry(saving.entryId)) !== undefined,
      stderr,
    };
  } finally {
    await storage.close();
  }
}
