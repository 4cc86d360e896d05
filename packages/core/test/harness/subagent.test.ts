import { describe, expect, it } from "vitest";
import {
  contentText,
  defineTool,
  Harness,
  ScriptedModel,
  type ConversationId,
  type Model,
  type ModelRequest,
  type SubagentResult,
  type Tool,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";

/** "delegate": hands the question to a subagent on the "child" model and returns its answer. */
function delegateTool(results: SubagentResult[], agent: object = { model: "child" }): Tool {
  return defineTool<{ question: string }>({
    name: "delegate",
    description: "Asks a helper agent",
    parameters: {
      type: "object",
      properties: { question: { type: "string" } },
      required: ["question"],
    },
    replay: "safe",
    execute: async ({ question }, api) => {
      const result = await api.runConversation({ agent: agent, input: question });
      results.push(result);
      return { content: `helper says: ${result.text}` };
    },
  });
}

const parentTurns = [
  { text: "asking", toolCalls: [{ name: "delegate", arguments: { question: "2+3?" } }] },
  { text: "the helper worked it out" },
];

/** A model that streams nothing until its signal aborts (a child cut short). */
function stuckModel(started: () => void): Model {
  return {
    async *stream(_request: ModelRequest, { signal }: { signal: AbortSignal }) {
      started();
      await new Promise<void>((_resolve, reject) =>
        signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true }),
      );
      yield { type: "text", delta: "never" };
    },
  };
}

describe("subagents > api.runConversation runs a child conversation and returns its answer", () => {
  it("creates a child owned by the tool's task, runs it with its own agent, and the parent gets its answer once", async () => {
    const results: SubagentResult[] = [];
    const child = new ScriptedModel([{ text: "5" }]);
    const harness = await Harness.open(new MemoryStorage(), {
      models: { default: new ScriptedModel(parentTurns), child },
      tools: [
        delegateTool(results, { model: "child", instructions: "You add numbers.", tools: [] }),
      ],
    });
    try {
      const root = await harness.root();
      const settled = await (
        await root.submit({ type: "input", content: "ask the helper" })
      ).wait();
      expect(settled.status).toBe("done");
      expect(results).toHaveLength(1);
      const [result] = results;
      expect(result?.text).toBe("5");
      expect(result?.submission).toMatchObject({ status: "done" });
      const record = await harness.session.read.conversation(
        result?.conversationId as ConversationId,
      );
      const toolTask = (await harness.session.read.scanTasks({ kind: "durably.tool" }, 10))
        .items[0];
      expect(record?.owner).toEqual({ conversationId: 1, taskId: toolTask?.id });
      expect(child.requests[0]?.system).toBe("You add numbers.");
      expect(child.requests[0]?.tools).toEqual([]);
      const toolResult = (await root.entries()).find((e) => e.kind === "durably.tool-result");
      expect(contentText((toolResult?.model?.[0] as { content: string }).content)).toBe(
        "helper says: 5",
      );
      const childConversation = await harness.conversation(
        result?.conversationId as ConversationId,
      );
      expect((await childConversation.entries()).map((e) => e.kind)).toEqual([
        "durably.user",
        "durably.assistant",
      ]);
      expect(await childConversation.configuration()).toMatchObject({ model: "child" });
    } finally {
      await harness.close();
    }
  });

  it("a call waiting for approval in the child is listed by harness.approvals() with its conversation, and runs once decided", async () => {
    const results: SubagentResult[] = [];
    const ran: string[] = [];
    const deploy = defineTool<{ env: string }>({
      name: "deploy",
      description: "Deploys",
      parameters: { type: "object", properties: { env: { type: "string" } }, required: ["env"] },
      replay: "unsafe",
      approval: "always",
      execute: ({ env }) => {
        ran.push(env);
        return { content: `deployed to ${env}` };
      },
    });
    const child = new ScriptedModel([
      { toolCalls: [{ name: "deploy", arguments: { env: "prod" } }] },
      { text: "deployed" },
    ]);
    const harness = await Harness.open(new MemoryStorage(), {
      models: { default: new ScriptedModel(parentTurns), child },
      tools: [delegateTool(results, { model: "child", tools: ["deploy"] }), deploy],
    });
    try {
      const root = await harness.root();
      const submission = await root.submit({ type: "input", content: "ask the helper" });
      // The parent's tool waits for its child, so whenIdle() would wait for the decision too.
      let waiting = await harness.approvals();
      for (const until = Date.now() + 5_000; waiting.length === 0 && Date.now() < until;)
        waiting = await new Promise((r) => setTimeout(r, 5)).then(() => harness.approvals());
      expect(await root.approvals()).toEqual([]);
      expect(waiting).toHaveLength(1);
      const [pending] = waiting;
      expect(pending).toMatchObject({ toolName: "deploy", arguments: { env: "prod" } });
      expect(pending!.conversationId).not.toBe(1);
      const inChild = await harness.conversation(pending!.conversationId);
      const { conversationId: _in, ...ownView } = pending!;
      expect(await inChild.approvals()).toEqual([ownView]);
      await inChild.approve(pending!.toolCallId, { approved: true });
      expect((await submission.wait()).status).toBe("done");
      expect(ran).toEqual(["prod"]);
      expect(results[0]?.text).toBe("deployed");
      expect(await harness.approvals()).toEqual([]);
    } finally {
      await harness.close();
    }
  });

  it("aborting the parent aborts the child's run", async () => {
    const results: SubagentResult[] = [];
    let started: () => void = () => undefined;
    const childStarted = new Promise<void>((resolve) => (started = resolve));
    const harness = await Harness.open(new MemoryStorage(), {
      models: { default: new ScriptedModel(parentTurns), child: stuckModel(started) },
      tools: [delegateTool(results)],
    });
    try {
      const root = await harness.root();
      const submission = await root.submit({ type: "input", content: "ask the helper" });
      await childStarted;
      await root.abort();
      expect((await submission.wait()).reason).toBe("aborted");
      await harness.whenIdle();
      const generations = (await harness.session.read.scanTasks({ kind: "durably.generation" }, 10))
        .items;
      expect(generations.map((t) => t.state.status)).toEqual(["terminal", "terminal"]);
      const child = generations.find((t) => t.conversationId !== 1);
      const outcome = (child?.state as { outcome?: { kind: string } }).outcome;
      expect(outcome?.kind).toBe("aborted");
    } finally {
      await harness.close();
    }
  });

  it("a child agent naming an unknown model fails the tool call with a TypeError the model reads", async () => {
    const results: SubagentResult[] = [];
    const harness = await Harness.open(new MemoryStorage(), {
      models: { default: new ScriptedModel(parentTurns) },
      tools: [delegateTool(results, { model: "nope" })],
    });
    try {
      const root = await harness.root();
      await (await root.submit({ type: "input", content: "ask" })).wait();
      const toolResult = (await root.entries()).find((e) => e.kind === "durably.tool-result");
      expect(toolResult?.model?.[0]).toMatchObject({
        isError: true,
        content:
          'error: delegate threw TypeError: configure: model "nope" is not one of the harness\'s models ("default")',
      });
      expect(results).toEqual([]);
      expect((await harness.session.read.scanConversations({}, 10)).items).toHaveLength(1);
    } finally {
      await harness.close();
    }
  });
});
