/**
 * The harness crash child: opens the backend through the adapter's child
 * module, runs one scenario's submission through a real Harness and reports
 * its progress over IPC until the parent SIGKILLs it.
 */
import { Harness, type Storage } from "@durably/core";
import {
  HARNESS_CHILD_ENV,
  type HarnessChildConfig,
  type HarnessChildMessage,
} from "./protocol.js";
import {
  COMPACTION_QUESTIONS,
  PROGRESS_WINDOW_MS,
  QUESTION,
  REQUEST_ID,
  scenarioScript,
  scenarioTools,
  scriptedModels,
  CHILD_RETRY,
  APPROVAL_REQUEST_ID,
  delegateTool,
  deployTool,
  helperScript,
  type HarnessModelFactory,
} from "./scripts.js";

type Body = HarnessChildMessage extends infer M
  ? M extends unknown
    ? Omit<M, "durablyHarness" | "at">
    : never
  : never;

function send(message: Body): void {
  process.send?.({ ...message, durablyHarness: 1, at: Date.now() });
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env[HARNESS_CHILD_ENV] ?? "null") as HarnessChildConfig | null;
  if (!config) throw new Error(`${HARNESS_CHILD_ENV} is not set`);
  const adapter = (await import(config.childModule)) as { open(path: string): Promise<Storage> };
  const storage = await adapter.open(config.path);
  const models: HarnessModelFactory = config.modelModule
    ? ((await import(config.modelModule)) as { createModel: HarnessModelFactory }).createModel
    : scriptedModels;
  const approving = config.scenario === "approval" || config.scenario === "approval-retry";
  const subagent = config.scenario === "subagent";
  const harness = await Harness.open(storage, {
    models: {
      default: models(scenarioScript(config.scenario, "child", config.scriptId)),
      ...(subagent ? { helper: models(helperScript("child", config.scriptId)) } : {}),
    },
    tools: [
      ...scenarioTools("child", {
        running: (name, api) => send({ type: "tool-running", name, attempt: api.attempt }),
        executed: () => undefined,
        committing: () => send({ type: "committing" }),
      }),
      ...(approving ? [deployTool("child", () => undefined)] : []),
      ...(subagent ? [delegateTool(() => undefined)] : []),
    ],
    settings: { progress: { persistWithinMs: PROGRESS_WINDOW_MS }, retry: CHILD_RETRY },
    onError: (error, where) => send({ type: "failed", error: `${where}: ${String(error)}` }),
  });
  harness.session.subscribeCommits((event) => {
    for (const write of event.writes)
      if (write.type === "conversation" && write.value.owner !== undefined)
        send({ type: "subagent-created", conversationId: write.value.id });
  });
  const root = await harness.root();
  let shown = -1;
  let retrying = false;
  let summary = -1;
  let asked = false;
  root.watch((view) => {
    const waiting = Object.values(view.live.tools).find((slot) => slot.status === "approval");
    if (waiting && !asked) {
      asked = true;
      send({ type: "approval-pending", toolCallId: waiting.toolCallId });
      if (config.scenario === "approval-retry")
        void root
          .approve(waiting.toolCallId, { approved: true, requestId: APPROVAL_REQUEST_ID })
          .then((decision) => send({ type: "approved", submissionId: decision.submissionId }))
          .catch((error: unknown) => send({ type: "failed", error: `approve: ${String(error)}` }));
    }
    const compaction = view.live.compaction?.text.length ?? 0;
    if (compaction !== summary) {
      summary = compaction;
      if (compaction > 0) send({ type: "summary", length: compaction });
    }
    const length = view.live.generation?.text.length ?? 0;
    if (length !== shown) {
      shown = length;
      send({ type: "text", length });
    }
    const retry = view.live.retry;
    if (retry && !retrying) {
      retrying = true;
      send({ type: "retry-waiting", attempt: retry.attempt, retryAt: retry.retryAt });
    }
  });
  send({ type: "ready" });
  if (config.scenario === "compaction") {
    // Two answered turns, then a compaction keeping the last one: killed while its summary streams.
    let last = 0;
    for (const question of COMPACTION_QUESTIONS) {
      const submission = await root.submit({ type: "input", content: question });
      await submission.wait();
      last = submission.id;
    }
    send({ type: "submitted", submissionId: last });
    void root.compact({ keepLastTurns: 1 }).catch(() => undefined);
  } else {
    const submission = await root.submit({
      type: "input",
      content: QUESTION,
      requestId: REQUEST_ID,
    });
    send({ type: "submitted", submissionId: submission.id });
  }
  // Runs until killed: the parent decides when. A blocked tool holds no
  // handle and the session's progress timer is unref'd, so keep the loop alive.
  setInterval(() => undefined, 60_000);
}

main().catch((error: unknown) => {
  send({
    type: "failed",
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  process.exitCode = 1;
});
