import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Harness, type SubmissionRecord } from "@durably/core";
import { openSqliteStorage } from "@durably/storage-sqlite";
import type { Output } from "../render/output.js";
import { liveModel, type LiveModelOptions } from "./live-model.js";
import { TranscriptPrinter, type Write } from "./live-printer.js";
import { addTool } from "./script.js";

export interface LiveAgentOptions extends LiveModelOptions {
  /** Where the SQLite file lives; the same directory resumes the same run. */
  dir: string;
  question: string;
}

/** Instructions of the demo agent: code, sent as `system`, never stored. */
const INSTRUCTIONS = [
  { id: "role", text: "You are a concise assistant in a command-line demo." },
  {
    id: "tools",
    text: "For arithmetic, call the add tool instead of adding in your head, then give the result in one short sentence.",
  },
];

/** The same question in the same directory is the same submission, so a rerun resumes it. */
function requestIdOf(question: string): string {
  return `agent-${createHash("sha256").update(question).digest("hex").slice(0, 16)}`;
}

function describeUnanswered(settled: SubmissionRecord): string {
  const detail = settled.detail as { message?: unknown } | undefined;
  const message = typeof detail?.message === "string" ? `: ${detail.message}` : "";
  return `${settled.reason ?? "unanswered"}${message}`;
}

/**
 * `demo agent --base-url … --model …` (or `--provider openai`): the durable
 * agent of the scripted demo on a real model, in `dir`. The transcript is
 * printed as it streams. Kill the process at any moment and run the same
 * command again: the question is the same submission (its requestId), and
 * the run resumes from its last commit.
 */
export async function liveAgentRun(
  out: Output,
  write: Write,
  options: LiveAgentOptions,
): Promise<number> {
  const { model, where } = liveModel(options);
  const dir = resolve(options.dir);
  await mkdir(dir, { recursive: true });
  const file = join(dir, "durably.sqlite");
  const harness = await Harness.open(await openSqliteStorage(file), {
    model,
    tools: [addTool()],
    instructions: INSTRUCTIONS,
    settings: { retry: { maxAttempts: 5, initialDelayMs: 1_000, maxDelayMs: 30_000 } },
  });
  try {
    out.line(out.style.bold(`A durable agent on ${where}`));
    out.line(out.style.dim(`Storage: ${file}`));
    out.line(
      out.style.dim(
        "Kill it at any moment (Ctrl-C, kill -9) and run the same command again: it resumes.",
      ),
    );
    out.line();
    const root = await harness.root();
    const printer = new TranscriptPrinter(write, out.style);
    const earlier = new Set((await root.entries()).map((e) => e.id as number));
    const stop = root.watch(printer.frame);
    const submission = await root.submit({
      type: "input",
      content: options.question,
      requestId: requestIdOf(options.question),
    });
    const status = submission.submitted.status;
    if (status === "done" || status === "unanswered")
      out.line(out.style.dim("(this question was settled by an earlier run; shown from storage)"));
    else if (submission.submitted.entry !== undefined && earlier.has(submission.submitted.entry))
      out.line(out.style.dim("(resuming the answer an earlier run started)"));
    const settled = await submission.wait();
    await harness.whenIdle();
    // Let the watcher print the last frame before the summary.
    await new Promise((r) => setTimeout(r, 20));
    stop();
    if (settled.status === "done") {
      out.line(
        out.style.green(`Answered (submission ${settled.id}, answer entry ${settled.answer}).`),
      );
      return 0;
    }
    out.line(out.style.red(`Unanswered: ${describeUnanswered(settled)}`));
    return 1;
  } finally {
    await harness.close();
  }
}
