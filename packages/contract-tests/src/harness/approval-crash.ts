import {
  APPROVAL_ENTRY,
  Harness,
  ROOT_CONVERSATION_ID as ROOT,
  TOOL_RESULT_ENTRY,
  contentText,
  type Storage,
} from "@durably/core";
import { kinds } from "./crash-checks.js";
import { check, checkTranscript, storedDoc, storedEntries, storedTasks } from "./invariants.js";
import type { HarnessChildMessage } from "./protocol.js";
import {
  APPROVAL_REQUEST_ID,
  deployTool,
  scenarioScript,
  scenarioTools,
  type CrashScenario,
  type HarnessModelFactory,
} from "./scripts.js";

/** The crash scenarios of tool approval: killed while a call waits, or right after it was approved. */
export type ApprovalCrash = Extract<CrashScenario, "approval" | "approval-retry">;

export function isApprovalCrash(scenario: CrashScenario): scenario is ApprovalCrash {
  return scenario === "approval" || scenario === "approval-retry";
}

type Slot = { status: string; toolCallId: string; approval?: { arguments: unknown } };

/** What storage kept after the kill, before anything resumes. */
export async function checkApprovalStored(
  raw: Storage,
  scenario: ApprovalCrash,
  messages: readonly HarnessChildMessage[],
): Promise<void> {
  await checkTranscript(raw, ROOT, `${scenario}: after the kill`);
  const entries = await storedEntries(raw, ROOT);
  const [tool] = await storedTasks(raw, ROOT, "durably.tool");
  const live = (await storedDoc(raw, "durably.live", ROOT)) as
    { tools: Record<string, Slot> } | undefined;
  const slot = tool ? live?.tools[String(tool.id)] : undefined;
  if (scenario === "approval") {
    check(
      kinds(entries) === "durably.user, durably.assistant",
      () => `approval: killed while the call waits, stored: ${kinds(entries)}`,
    );
    check(
      tool?.state.status === "pending" &&
        JSON.stringify(tool.state.checkpoint) === '{"phase":"approval"}',
      () =>
        `approval: the deploy task must be stored pending in its approval phase; found ${JSON.stringify(tool?.state)}`,
    );
    check(
      slot?.status === "approval" && JSON.stringify(slot.approval?.arguments) === '{"env":"prod"}',
      () => `approval: the live slot must show the pending approval; found ${JSON.stringify(slot)}`,
    );
    return;
  }
  const approved = messages.find((m) => m.type === "approved");
  check(approved !== undefined, () => "approval-retry: the child never reported its decision");
  check(
    kinds(entries) === `durably.user, durably.assistant, ${APPROVAL_ENTRY}`,
    () => `approval-retry: killed after the decision, stored: ${kinds(entries)}`,
  );
  check(
    tool !== undefined && tool.state.status !== "terminal" && slot?.status !== "approval",
    () =>
      `approval-retry: the approved call must be stored unfinished and no longer waiting; task ${JSON.stringify(tool?.state)}, slot ${JSON.stringify(slot)}`,
  );
}

/**
 * Resumes in this process: "approval" approves the waiting call (with a
 * request id, then retries it); "approval-retry" retries the child's
 * decision with its request id. Either way the decision is stored once,
 * the tool deploys exactly once and the run answers.
 */
export async function resumeApprovalCrash(
  open: () => Promise<Storage>,
  scenario: ApprovalCrash,
  id: string,
  models: HarnessModelFactory,
  messages: readonly HarnessChildMessage[],
): Promise<void> {
  const deployed: string[] = [];
  const harness = await Harness.open(await open(), {
    model: models(scenarioScript(scenario, "parent", id)),
    tools: [
      ...scenarioTools("parent", { running: () => undefined, executed: () => undefined }),
      deployTool("parent", (env) => deployed.push(env)),
    ],
  });
  try {
    const root = await harness.root();
    const asked = messages.find(
      (m): m is Extract<HarnessChildMessage, { type: "approval-pending" }> =>
        m.type === "approval-pending",
    );
    check(asked !== undefined, () => `${scenario}: the child never showed the pending approval`);
    if (scenario === "approval") {
      await harness.whenIdle();
      const pending = await root.approvals();
      check(
        pending.length === 1 &&
          pending[0]?.toolCallId === asked.toolCallId &&
          JSON.stringify(pending[0].arguments) === '{"env":"prod"}' &&
          deployed.length === 0,
        () =>
          `approval: after reopening, pending approvals ${JSON.stringify(pending)}, deployed ${JSON.stringify(deployed)}; expected the one call, not run`,
      );
    }
    const decision = await root.approve(asked.toolCallId, {
      approved: true,
      requestId: APPROVAL_REQUEST_ID,
    });
    const approved = messages.find((m) => m.type === "approved");
    if (approved?.type === "approved")
      check(
        decision.submissionId === approved.submissionId,
        () =>
          `approval-retry: the retried decision made submission ${decision.submissionId}, not the child's ${approved.submissionId}`,
      );
    const [input] = await root.submissions();
    const settled = await input?.wait();
    await harness.whenIdle();
    check(
      settled?.status === "done",
      () => `${scenario}: the run settled ${JSON.stringify(settled)}`,
    );
    // Asked once more after it ran: still the same decision, nothing new stored.
    const again = await root.approve(asked.toolCallId, {
      approved: true,
      requestId: APPROVAL_REQUEST_ID,
    });
    check(
      again.submissionId === decision.submissionId && again.entryId === decision.entryId,
      () =>
        `${scenario}: a retried decision returned ${JSON.stringify(again)}, not ${JSON.stringify(decision)}`,
    );
    check(
      JSON.stringify(deployed) === '["prod"]',
      () => `${scenario}: deploy ran ${JSON.stringify(deployed)}; it must run exactly once`,
    );
    const entries = await root.entries();
    check(
      kinds(entries) ===
        `durably.user, durably.assistant, ${APPROVAL_ENTRY}, ${TOOL_RESULT_ENTRY}, durably.assistant`,
      () => `${scenario}: final transcript is ${kinds(entries)}`,
    );
    const result = entries[3]?.model?.[0];
    check(
      result?.role === "toolResult" &&
        !result.isError &&
        contentText(result.content) === "deployed to prod",
      () => `${scenario}: tool result ${JSON.stringify(result)}`,
    );
    const submissions = await root.submissions();
    check(
      submissions.map((s) => s.submitted.type).join(", ") === "input, write",
      () =>
        `${scenario}: submissions ${submissions.map((s) => `${s.id} (${s.submitted.type})`).join(", ")}; the decision must be stored once`,
    );
    const live = (await root.view()).live;
    check(
      live.run === null && Object.keys(live.tools).length === 0,
      () => `${scenario}: live is not idle after the run: ${JSON.stringify(live)}`,
    );
  } finally {
    await harness.close();
  }
}
