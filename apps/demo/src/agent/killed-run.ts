import { fork } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  Harness,
  LiveDoc,
  ROOT_CONVERSATION_ID,
  type EntryRecord,
  type Storage,
  type SubmissionRecord,
} from "@durably/core";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { scanAll } from "../scan.js";
import { isAgentChildMessage, type AgentChildMessage } from "./agent-protocol.js";
import { countSettlements, type AgentRun } from "./clean-run.js";
import { addTool, agentModel, CHILD_PROGRESS_MS } from "./script.js";

/** What storage held after the kill, read through the Storage port before anything resumed. */
export interface StoredBeforeResume {
  entries: EntryRecord[];
  submission: SubmissionRecord | undefined;
  /** The tool slots of `durably.live`: name, attempt and the output stored so far. */
  toolSlots: { toolName: string; attempt: number; output: string }[];
  /** Tasks by kind and status, e.g. `durably.tool running`. */
  tasks: string[];
}

export interface KilledAgentRun extends AgentRun {
  signal: NodeJS.Signals | null;
  /** The attempt the child's tool was on when it was killed. */
  killedAttempt: number | undefined;
  submissionId: number;
  before: StoredBeforeResume;
}

/** How long the child may take to reach the tool. */
const CHILD_TIMEOUT_MS = 30_000;
/** The tool's output line is stored within CHILD_PROGRESS_MS; this leaves room on a busy machine. */
const STORE_SLACK_MS = 250;

/** The child runs as the same kind of file as this one: built `.js`, or `.ts` under tsx. */
function childPath(): string {
  const here = fileURLToPath(import.meta.url);
  return join(here, "..", `agent-child${extname(here)}`);
}

/** Forks the child, waits for its tool to be running, SIGKILLs it there. */
async function runAndKill(
  file: string,
): Promise<{ submissionId: number; attempt: number; signal: NodeJS.Signals | null }> {
  const child = fork(childPath(), [file], {
    execArgv: [...process.execArgv],
    stdio: ["ignore", "ignore", "pipe", "ipc"],
    serialization: "json",
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const messages: AgentChildMessage[] = [];
  const running = new Promise<Extract<AgentChildMessage, { type: "tool-running" }> | undefined>(
    (resolve) => {
      const timer = setTimeout(() => resolve(undefined), CHILD_TIMEOUT_MS);
      child.on("message", (message: unknown) => {
        if (!isAgentChildMessage(message)) return;
        messages.push(message);
        if (message.type === "tool-running" || message.type === "failed") {
          clearTimeout(timer);
          resolve(message.type === "tool-running" ? message : undefined);
        }
      });
      void exited.then(() => {
        clearTimeout(timer);
        resolve(undefined);
      });
    },
  );
  const reached = await running;
  if (reached !== undefined) {
    // Its output line is stored within the progress window: give it that, then die as a crash would.
    await new Promise((resolve) => setTimeout(resolve, CHILD_PROGRESS_MS + STORE_SLACK_MS));
  }
  child.kill("SIGKILL");
  const { code, signal } = await exited;
  const submitted = messages.find((m) => m.type === "submitted");
  if (reached === undefined || submitted === undefined) {
    const failed = messages.find((m) => m.type === "failed");
    throw new Error(
      `the agent child ended (code ${code}, signal ${signal}) before its tool ran` +
        (failed?.type === "failed" ? `: ${failed.error}` : "") +
        (stderr ? `\n${stderr}` : ""),
    );
  }
  return { submissionId: submitted.submissionId, attempt: reached.attempt, signal };
}

async function readStored(storage: Storage, submissionId: number): Promise<StoredBeforeResume> {
  const conversationId = ROOT_CONVERSATION_ID;
  const entries = await scanAll((limit, cursor) =>
    storage.scanEntries({ conversationId, order: "ascending" }, limit, cursor),
  );
  const live = await storage.findDocument(
    { kind: LiveDoc.kind, scope: { kind: "conversation", conversationId } },
    "current",
  );
  const value = live && (await storage.document(live.id, "current"))?.value;
  const slots = Object.values(
    (value as { tools?: Record<string, StoredBeforeResume["toolSlots"][number]> } | undefined)
      ?.tools ?? {},
  );
  const tasks = await scanAll((limit, cursor) =>
    storage.scanTasks({ conversationId }, limit, cursor),
  );
  return {
    entries,
    submission: await storage.submission(submissionId as SubmissionRecord["id"]),
    toolSlots: slots.map((s) => ({ toolName: s.toolName, attempt: s.attempt, output: s.output })),
    tasks: tasks.map((t) => `${t.kind} ${t.state.status}`),
  };
}

/**
 * The agent run killed mid-tool: a child process submits the question and
 * is SIGKILLed while `add` runs; the parent reads what storage kept, then
 * reopens it with `Harness.open`, resumes and waits for the same submission.
 */
export async function killedAgentRun(dir: string): Promise<KilledAgentRun> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, "durably.sqlite");
  const killed = await runAndKill(file);

  const raw = await openSqliteStorage(file);
  let before: StoredBeforeResume;
  try {
    before = await readStored(raw, killed.submissionId);
  } finally {
    await raw.close();
  }

  const toolAttempts: number[] = [];
  const harness = await Harness.open(await openSqliteStorage(file), {
    model: agentModel(),
    tools: [addTool({ ran: (attempt) => toolAttempts.push(attempt) })],
  });
  try {
    const settlements = countSettlements(harness);
    const root = await harness.root();
    const submission = await root.submission(killed.submissionId as SubmissionRecord["id"]);
    const settled = await submission.wait();
    await harness.whenIdle();
    return {
      file,
      signal: killed.signal,
      killedAttempt: killed.attempt,
      submissionId: killed.submissionId,
      before,
      settled,
      settlements: settlements.count,
      entries: await root.entries(),
      toolAttempts,
    };
  } finally {
    await harness.close();
  }
}
