/**
 * The child process of the killed agent run (forked by killed-run.ts): it
 * opens the SQLite file, submits the question through a real Harness, and
 * when the `add` tool is running tells the parent over IPC and waits there
 * to be SIGKILLed.
 */
import { Harness } from "@durably/core";
import { openSqliteStorage } from "@durably/storage-sqlite";
import type { AgentChildMessage } from "./agent-protocol.js";
import { addTool, agentModel, CHILD_PROGRESS_MS, QUESTION, REQUEST_ID } from "./script.js";

function send(message: AgentChildMessage): void {
  process.send?.(message);
}

async function main(file: string): Promise<void> {
  const harness = await Harness.open(await openSqliteStorage(file), {
    model: agentModel(),
    tools: [addTool({ pause: (api) => send({ type: "tool-running", attempt: api.attempt }) })],
    settings: { progress: { persistWithinMs: CHILD_PROGRESS_MS } },
    onError: (error, where) => send({ type: "failed", error: `${where}: ${String(error)}` }),
  });
  const root = await harness.root();
  const submission = await root.submit({ type: "input", content: QUESTION, requestId: REQUEST_ID });
  send({ type: "submitted", submissionId: submission.id });
  // The blocked tool holds no handle (and the progress timer is unref'd): keep
  // the process alive until the parent kills it.
  setInterval(() => undefined, 60_000);
}

const file = process.argv[2];
if (file === undefined) {
  process.stderr.write("usage: agent-child <sqlite file>\n");
  process.exit(2);
}
main(file).catch((error: unknown) => {
  send({
    type: "failed",
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  process.exitCode = 1;
});
