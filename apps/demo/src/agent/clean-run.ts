import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { Harness, type EntryRecord, type SubmissionRecord } from "@durably/core";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { addTool, agentModel, QUESTION, REQUEST_ID } from "./script.js";

export interface AgentRun {
  file: string;
  settled: SubmissionRecord;
  /** Every commit that settled the submission (exactly one when the run is right). */
  settlements: number;
  entries: EntryRecord[];
  /** Attempts of the `add` tool that ran in this process. */
  toolAttempts: number[];
}

/** Counts the commits that settle a submission, from the session's commit stream. */
export function countSettlements(harness: Harness): { readonly count: number } {
  const counter = { count: 0 };
  harness.session.subscribeCommits((event) => {
    for (const write of event.writes) {
      if (
        write.type === "submission" &&
        (write.value.status === "done" || write.value.status === "unanswered")
      ) {
        counter.count += 1;
      }
    }
  });
  return counter;
}

/** The agent run in this process, start to finish: question, `add` call, answer. */
export async function cleanAgentRun(dir: string): Promise<AgentRun> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, "durably.sqlite");
  const toolAttempts: number[] = [];
  const harness = await Harness.open(await openSqliteStorage(file), {
    model: agentModel(),
    tools: [addTool({ ran: (attempt) => toolAttempts.push(attempt) })],
  });
  try {
    const settlements = countSettlements(harness);
    const root = await harness.root();
    const submission = await root.submit({
      type: "input",
      content: QUESTION,
      requestId: REQUEST_ID,
    });
    const settled = await submission.wait();
    await harness.whenIdle();
    return {
      file,
      settled,
      settlements: settlements.count,
      entries: await root.entries(),
      toolAttempts,
    };
  } finally {
    await harness.close();
  }
}
