import { cleanAgentRun, type AgentRun } from "../agent/clean-run.js";
import { killedAgentRun } from "../agent/killed-run.js";
import {
  answerText,
  EXPECTED_KINDS,
  kinds,
  toolResultOf,
  TRANSCRIPT_COLUMNS,
  transcriptRows,
} from "../agent/transcript.js";
import type { Checks } from "../checks.js";
import { subheading } from "../render/heading.js";
import type { Output } from "../render/output.js";
import { withProgress } from "../render/progress.js";
import { renderTable } from "../render/table.js";
import type { TourStep } from "./context.js";
import { join } from "node:path";

const ANSWER = "2 + 3 = 5";

/** The claims both runs must meet: settled once, done, the tool's result and the answer stored. */
function checkRun(checks: Checks, name: string, run: AgentRun): void {
  checks.claim(
    `${name}: the submission settled once, done, with the last entry as its answer`,
    run.settlements === 1 &&
      run.settled.status === "done" &&
      run.settled.answer === run.entries[run.entries.length - 1]?.id,
    `settled ${run.settlements} times: ${JSON.stringify(run.settled)}`,
  );
  const result = toolResultOf(run.entries);
  checks.claim(
    `${name}: the transcript is question, tool call, tool result "5", answer`,
    kinds(run.entries) === EXPECTED_KINDS &&
      result?.role === "toolResult" &&
      result.content === "5" &&
      !result.isError,
    `kinds ${kinds(run.entries)}; tool result ${JSON.stringify(result)}`,
  );
  checks.claim(
    `${name}: the answer ${JSON.stringify(ANSWER)} is stored`,
    answerText(run.entries[run.entries.length - 1]) === ANSWER,
    `got ${JSON.stringify(answerText(run.entries[run.entries.length - 1]))}`,
  );
}

function transcript(out: Output, run: AgentRun): void {
  out.lines(
    renderTable({ columns: TRANSCRIPT_COLUMNS, rows: transcriptRows(run.entries) }, out.style),
  );
}

export const agentStep: TourStep = {
  title: "5. A scripted agent run, killed mid-tool and resumed",
  async run({ out, checks, root }) {
    out.line("A Harness on SQLite answers with a ScriptedModel: the question, a call of the add");
    out.line("tool, its result, the answer. Every step is a commit.");

    subheading(out, "The run, start to finish");
    const clean = await withProgress(out, "agent run", () =>
      cleanAgentRun(join(root, "agent", "clean")),
    );
    transcript(out, clean);
    out.line();
    checkRun(checks, "agent", clean);

    subheading(out, "The same run in a child process SIGKILLed inside the add tool");
    const killed = await withProgress(out, "running and killing the agent", () =>
      killedAgentRun(join(root, "agent", "killed")),
    );
    const { before } = killed;
    out.line(
      `  The child submitted the question (submission ${killed.submissionId}); its add tool (attempt ${killed.killedAttempt ?? "?"}) told`,
    );
    out.line(
      `  the parent over IPC and waited; the parent killed it (signal ${killed.signal ?? "none"}).`,
    );
    out.line();
    out.line("  Stored before resume:");
    out.lines(
      renderTable({ columns: TRANSCRIPT_COLUMNS, rows: transcriptRows(before.entries) }, out.style),
    );
    out.line();
    out.lines(
      renderTable(
        {
          columns: [{ header: "" }, { header: "stored" }],
          rows: [
            [
              "submission",
              `${before.submission?.id ?? "?"} ${before.submission?.status ?? "missing"}`,
            ],
            ["tasks", before.tasks.join(", ")],
            ...before.toolSlots.map((slot) => [
              `live tool slot`,
              `${slot.toolName} attempt ${slot.attempt}, output ${JSON.stringify(slot.output)}`,
            ]),
          ],
        },
        out.style,
      ),
    );
    out.line();
    checks.claim(
      "agent: the child was SIGKILLed while its tool ran",
      killed.signal === "SIGKILL" && killed.killedAttempt === 1,
      `signal ${killed.signal}, attempt ${killed.killedAttempt}`,
    );
    checks.claim(
      "agent: before resume, storage holds the question and the tool call, no result, submission not settled",
      kinds(before.entries) === "durably.user, durably.assistant" &&
        before.submission?.status === "placed",
      `kinds ${kinds(before.entries)}; submission ${JSON.stringify(before.submission)}`,
    );

    out.line(
      `  Reopened with Harness.open in this process and resumed; the add tool reran (safe to replay).`,
    );
    out.line();
    out.line("  Final transcript:");
    transcript(out, killed);
    out.line();
    checks.claim(
      "agent: on resume the add tool reran once, as attempt 2",
      JSON.stringify(killed.toolAttempts) === "[2]",
      `attempts run after the kill: ${JSON.stringify(killed.toolAttempts)}`,
    );
    checkRun(checks, "agent after the kill", killed);
  },
};
