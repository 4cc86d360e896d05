import {
  ApprovalNotPending,
  contentText,
  Harness,
  ROOT_CONVERSATION_ID as ROOT,
  type Storage,
} from "@durably/core";
import type { Reopen } from "../storage/api.js";
import { check, checkTranscript } from "./invariants.js";
import { describeMessages, recording } from "./recording.js";
import type { HarnessScenario } from "./scenarios.js";
import { deployTool, scriptId, type HarnessModelFactory, type ModelScript } from "./scripts.js";

const kinds = (entries: readonly { kind: string }[]): string =>
  entries.map((e) => e.kind).join(", ");

const script = (name: string, answer: string): ModelScript => ({
  id: scriptId(name),
  turns: [
    { text: "deploying ", toolCalls: [{ name: "deploy", arguments: { env: "prod" } }] },
    { text: answer },
  ],
});

/** Opens a harness whose "deploy" tool asks for approval; `deployed` lists what really ran. */
async function openDeploy(storage: Storage, models: HarnessModelFactory, s: ModelScript) {
  const deployed: string[] = [];
  const model = recording(models(s));
  const harness = await Harness.open(storage, {
    model,
    tools: [deployTool("parent", (env) => deployed.push(env))],
    settings: { concurrency: 1 },
  });
  return { harness, model, deployed, root: await harness.root() };
}

/** The one pending approval (its call id depends on the model adapter). */
async function onlyPending(root: Awaited<ReturnType<typeof openDeploy>>["root"], where: string) {
  const pending = await root.approvals();
  check(
    pending.length === 1 &&
      pending[0]?.toolName === "deploy" &&
      JSON.stringify(pending[0].arguments) === '{"env":"prod"}',
    () => `${where}: pending approvals ${JSON.stringify(pending)}; expected the one deploy call`,
  );
  return pending[0];
}

/** Human in the loop: tool approval. */
export const approvalScenarios: readonly HarnessScenario[] = [
  {
    name: "a call that needs approval waits without a concurrency slot (whenIdle resolves); approved, it runs once and the run answers",
    async run(storage, _reopen, models) {
      const { harness, deployed, root } = await openDeploy(
        storage,
        models,
        script("approve", "deployed"),
      );
      try {
        const submission = await root.submit({ type: "input", content: "ship it" });
        await harness.whenIdle();
        const pending = await onlyPending(root, "before the decision");
        check(deployed.length === 0, () => `deploy ran before approval: ${deployed.join(", ")}`);
        const running = harness.scheduler.inspect().tasks.filter((t) => t.active);
        check(
          running.length === 0,
          () => `tasks holding a slot while the call waits: ${JSON.stringify(running)}`,
        );
        const decision = await root.approve(pending.toolCallId, { approved: true });
        const settled = await submission.wait();
        check(settled.status === "done", () => `settled ${JSON.stringify(settled)}`);
        check(
          JSON.stringify(deployed) === '["prod"]',
          () => `deploy ran ${JSON.stringify(deployed)}`,
        );
        const entries = await root.entries();
        check(
          kinds(entries) ===
            "durably.user, durably.assistant, durably.approval, durably.tool-result, durably.assistant",
          () => `transcript: ${kinds(entries)}`,
        );
        check(
          entries[2]?.id === decision.entryId,
          () => `the decision's entry ${decision.entryId} is not entry ${entries[2]?.id}`,
        );
        await checkTranscript(storage, ROOT, "after an approved call");
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "a denied call gives the model the error result 'denied: <reason>' and the run goes on to answer",
    async run(storage, _reopen, models) {
      const { harness, model, deployed, root } = await openDeploy(
        storage,
        models,
        script("deny", "not deployed"),
      );
      try {
        const submission = await root.submit({ type: "input", content: "ship it" });
        await harness.whenIdle();
        const pending = await onlyPending(root, "before the decision");
        await root.approve(pending.toolCallId, { approved: false, reason: "release freeze" });
        const settled = await submission.wait();
        check(settled.status === "done", () => `settled ${JSON.stringify(settled)}`);
        check(deployed.length === 0, () => `a denied call ran: ${deployed.join(", ")}`);
        const last = model.requests.at(-1);
        const result = last?.messages.find((m) => m.role === "toolResult");
        check(
          result?.role === "toolResult" &&
            result.isError &&
            contentText(result.content) === "denied: release freeze",
          () => `the model was sent: ${describeMessages(last)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "a pending approval survives closing and reopening; denied after the reopen, the model sees the denial",
    persistent: true,
    async run(storage, reopen, models) {
      const s = script("deny-reopen", "not deployed");
      const first = await openDeploy(storage, models, s);
      let toolCallId: string;
      try {
        await first.root.submit({ type: "input", content: "ship it" });
        await first.harness.whenIdle();
        toolCallId = (await onlyPending(first.root, "before closing")).toolCallId;
      } finally {
        await first.harness.close();
      }
      const again = await openDeploy(await (reopen as Reopen)(), models, s);
      try {
        await again.harness.whenIdle();
        const pending = await onlyPending(again.root, "after reopening");
        check(
          pending.toolCallId === toolCallId,
          () => `after reopening the pending call is ${pending.toolCallId}, not ${toolCallId}`,
        );
        await again.root.approve(toolCallId, { approved: false, reason: "not today" });
        const [input] = await again.root.submissions();
        const settled = await input?.wait();
        check(settled?.status === "done", () => `settled ${JSON.stringify(settled)}`);
        check(again.deployed.length === 0, () => `a denied call ran`);
        const last = again.model.requests.at(-1);
        const result = last?.messages.find((m) => m.role === "toolResult");
        check(
          result?.role === "toolResult" && contentText(result.content) === "denied: not today",
          () => `the model was sent: ${describeMessages(last)}`,
        );
      } finally {
        await again.harness.close();
      }
    },
  },
  {
    name: "aborting the conversation denies a pending approval; the call never runs",
    async run(storage, _reopen, models) {
      const { harness, deployed, root } = await openDeploy(
        storage,
        models,
        script("abort", "never"),
      );
      try {
        const submission = await root.submit({ type: "input", content: "ship it" });
        await harness.whenIdle();
        await onlyPending(root, "before aborting");
        await root.abort();
        const settled = await submission.wait();
        check(
          settled.status === "unanswered" && settled.reason === "aborted",
          () => `settled ${JSON.stringify(settled)}`,
        );
        const result = (await root.entries()).find((e) => e.kind === "durably.tool-result");
        const message = result?.model?.[0];
        check(
          message?.role === "toolResult" &&
            message.isError &&
            contentText(message.content).startsWith("denied: "),
          () => `the waiting call's result: ${JSON.stringify(message)}`,
        );
        check(deployed.length === 0, () => `the call ran: ${deployed.join(", ")}`);
        check((await root.approvals()).length === 0, () => "an approval is still pending");
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "approving an unknown call, or one already decided, throws ApprovalNotPending and stores nothing",
    async run(storage, _reopen, models) {
      const { harness, root } = await openDeploy(storage, models, script("bad", "deployed"));
      const writes: string[] = [];
      harness.session.subscribeCommits((event) => {
        for (const w of event.writes) writes.push(w.type);
      });
      try {
        const submission = await root.submit({ type: "input", content: "ship it" });
        await harness.whenIdle();
        const pending = await onlyPending(root, "before the decision");
        writes.length = 0;
        const unknown = await root.approve("no-such-call", { approved: true }).then(
          () => undefined,
          (error: unknown) => error,
        );
        check(
          unknown instanceof ApprovalNotPending && writes.length === 0,
          () => `approving an unknown call: ${String(unknown)}; stored ${JSON.stringify(writes)}`,
        );
        await root.approve(pending.toolCallId, { approved: true });
        await submission.wait();
        await harness.whenIdle();
        writes.length = 0;
        const twice = await root.approve(pending.toolCallId, { approved: false }).then(
          () => undefined,
          (error: unknown) => error,
        );
        check(
          twice instanceof ApprovalNotPending && writes.length === 0,
          () => `deciding a decided call again: ${String(twice)}; stored ${JSON.stringify(writes)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
];
