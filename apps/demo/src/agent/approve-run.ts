import { createHash } from "node:crypto";
import { appendFile, mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import {
  defineTool,
  Harness,
  ScriptedModel,
  type Conversation,
  type LiveToolSlot,
  type Model,
  type Submission,
  type SubmissionRecord,
  type Tool,
} from "@durably/core";
import { openSqliteStorage } from "@durably/storage-sqlite";
import type { Output } from "../render/output.js";
import type { ApproveAgentOptions } from "./live-defaults.js";
import { liveModel } from "./live-model.js";
import { TranscriptPrinter, type Write } from "./live-printer.js";

/** The file the `save_note` tool appends to, in the run's directory. */
export const NOTES_FILE = "notes.txt";
/** What the terminal shows when a call waits for a decision. */
export const APPROVAL_PROMPT = "needs your approval";

/** The scripted model: turn 1 saves a note (which needs approval), turn 2 answers. */
function scriptedModel(): ScriptedModel {
  return new ScriptedModel([
    {
      text: "2 + 3 = 5. I will save that as a note. ",
      toolCalls: [{ name: "save_note", arguments: { text: "2 + 3 = 5" } }],
    },
    { text: "Done: the note tool's result above says whether it was saved." },
  ]);
}

/**
 * `save_note`: appends a line to notes.txt. A real effect on disk, so it asks
 * first (approval "always") and is never rerun after a crash (replay
 * "unsafe").
 */
function saveNoteTool(dir: string): Tool {
  return defineTool<{ text: string }>({
    name: "save_note",
    description: "Save a short note (one line) to the user's notes file",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    replay: "unsafe",
    approval: "always",
    execute: async ({ text }) => {
      await appendFile(join(dir, NOTES_FILE), `${text.replace(/\n/g, " ")}\n`);
      return { content: `saved to ${NOTES_FILE}` };
    },
  });
}

const INSTRUCTIONS =
  "You are a concise assistant in a command-line demo. When asked to save something, call the save_note tool once; a person approves each call.";

function requestIdOf(question: string): string {
  return `approve-${createHash("sha256").update(question).digest("hex").slice(0, 16)}`;
}

type Next = { approval: LiveToolSlot } | { settled: SubmissionRecord };

/** Resolves with the next call waiting for a decision not asked yet, or the settled submission. */
function nextEvent(
  root: Conversation,
  submission: Submission,
  asked: ReadonlySet<number>,
): Promise<Next> {
  return new Promise((resolveNext, reject) => {
    let done = false;
    const watching: { stop?: () => void } = {};
    const finish = (next: Next): void => {
      if (done) return;
      done = true;
      watching.stop?.();
      resolveNext(next);
    };
    watching.stop = root.watch((view) => {
      const slot = Object.values(view.live.tools).find(
        (s) => s.status === "approval" && !asked.has(s.taskId),
      );
      if (slot) finish({ approval: slot });
    });
    if (done) watching.stop();
    submission.wait().then((settled) => finish({ settled }), reject);
  });
}

/**
 * `demo agent --approve`: a durable agent whose tool asks a person first.
 * The call waits, committed, while the terminal asks; kill the process at
 * the question and run the same command again: the same call is still
 * waiting and is asked again. `y` approves; anything else denies (a typed
 * line is the reason the model reads).
 */
export async function approveAgentRun(
  out: Output,
  write: Write,
  options: ApproveAgentOptions,
  input: NodeJS.ReadableStream = process.stdin,
): Promise<number> {
  const dir = resolve(options.dir);
  await mkdir(dir, { recursive: true });
  const file = join(dir, "durably.sqlite");
  let model: Model = scriptedModel();
  let where = "a scripted model";
  if (options.live) ({ model, where } = liveModel(options.live));
  const harness = await Harness.open(await openSqliteStorage(file), {
    model,
    tools: [saveNoteTool(dir)],
    instructions: INSTRUCTIONS,
  });
  // Opened at the first question only: reading stdin keeps the process alive.
  let reader: ReturnType<typeof createInterface> | undefined;
  let lines: AsyncIterator<string> | undefined;
  try {
    out.line(out.style.bold(`A durable agent that asks before it acts, on ${where}`));
    out.line(out.style.dim(`Storage: ${file}`));
    out.line(
      out.style.dim(
        "Kill it while it asks (Ctrl-C, kill -9) and run the same command again: the call is still waiting.",
      ),
    );
    out.line();
    const root = await harness.root();
    const printer = new TranscriptPrinter(write, out.style);
    const stopPrinting = root.watch(printer.frame);
    const submission = await root.submit({
      type: "input",
      content: options.question,
      requestId: requestIdOf(options.question),
    });
    // By task: some providers reuse a call id in every answer.
    const asked = new Set<number>();
    let settled: SubmissionRecord | undefined;
    while (!settled) {
      const next = await nextEvent(root, submission, asked);
      if ("settled" in next) {
        settled = next.settled;
        break;
      }
      const slot = next.approval;
      asked.add(slot.taskId);
      write(
        out.style.yellow(
          `  ? ${slot.toolName}(${JSON.stringify(slot.approval?.arguments ?? {})}) ${APPROVAL_PROMPT}. Approve? [y = yes; n, empty or a reason = deny] `,
        ),
      );
      reader ??= createInterface({ input, terminal: false });
      lines ??= reader[Symbol.asyncIterator]();
      const answer = await lines.next();
      if (answer.done) {
        write("\n");
        out.line(
          out.style.yellow(
            "No answer (the input closed): the call stays waiting. Run the same command again to decide.",
          ),
        );
        stopPrinting();
        return 1;
      }
      const text = String(answer.value).trim();
      // A terminal echoes the typed line; piped input does not, so show it.
      if ((input as { isTTY?: boolean }).isTTY !== true) write(`${text}\n`);
      const approved = /^(y|yes)$/i.test(text);
      const reason = approved || /^(n|no)?$/i.test(text) ? undefined : text;
      await root.approve(slot.toolCallId, {
        approved,
        ...(approved ? {} : { reason: reason ?? "denied at the terminal" }),
        requestId: `terminal-${slot.taskId}`,
      });
      out.line(
        approved
          ? out.style.green("  ✓ approved")
          : out.style.red(`  ✗ denied: ${reason ?? "denied at the terminal"}`),
      );
    }
    await harness.whenIdle();
    await new Promise((r) => setTimeout(r, 20)); // the watcher's last frame first
    stopPrinting();
    if (settled.status === "done") {
      out.line(
        out.style.green(`Answered (submission ${settled.id}, answer entry ${settled.answer}).`),
      );
      return 0;
    }
    out.line(out.style.red(`Unanswered: ${settled.reason ?? "unanswered"}`));
    return 1;
  } finally {
    reader?.close(); // pauses the input, so the process can exit
    await harness.close();
  }
}
