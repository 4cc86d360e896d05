import { describe, expect, it } from "vitest";
import {
  defineTool,
  executeToolCall,
  Harness,
  ScriptedModel,
  TOOL_TASK,
  toolsByName,
  type ConversationId,
  type EntryRecord,
  type HarnessOptions,
  type ScriptedTurn,
  type Tool,
  type ToolApi,
} from "../../src/index.js";
import { Survivor } from "../support/faulty-storage.js";
import { MemoryStorage } from "../support/memory.js";
import { gate } from "./support/harness.js";

/** "charge": an unsafe tool with an effect that must not happen twice, or at all once aborted. */
function chargeTool(charged: string[]): Tool {
  return defineTool({
    name: "charge",
    description: "Charges the card",
    parameters: { type: "object" },
    replay: "unsafe",
    execute: () => {
      charged.push("$100");
      return { content: "charged $100" };
    },
  });
}

const callCharge: ScriptedTurn = { toolCalls: [{ name: "charge", arguments: {} }] };

async function open(turns: ScriptedTurn[], tools: Tool[], options: Partial<HarnessOptions> = {}) {
  const harness = await Harness.open(new MemoryStorage(), {
    model: new ScriptedModel(turns),
    tools,
    ...options,
  });
  return { harness, root: await harness.root() };
}

/** The stored tool results: the message the model reads and the entry's data. */
const toolResults = (entries: readonly EntryRecord[]) =>
  entries
    .filter((e) => e.kind === "durably.tool-result")
    .map((e) => ({ message: e.model?.[0], data: e.data }));

const notCalled = (toolCallId: string, toolName: string) => ({
  message: {
    role: "toolResult",
    toolCallId,
    toolName,
    content: `aborted: the tool call was aborted before it ran ("${toolName}" was not called).`,
    isError: true,
  },
  data: { toolCallId, aborted: true },
});

describe("abort before execute: a tool whose abort came first does not run", () => {
  it("an abort that lands while beforeTool runs (after the intent commit) keeps execute from being called, and the result says so", async () => {
    const charged: string[] = [];
    const hookRunning = gate();
    const hookDone = gate();
    const { harness, root } = await open([callCharge, { text: "done" }], [chargeTool(charged)], {
      hooks: {
        beforeTool: async () => {
          hookRunning.open();
          await hookDone.promise;
          return undefined;
        },
      },
    });
    try {
      const submission = await root.submit({ type: "input", content: "pay" });
      await hookRunning.promise;
      expect(await root.abort()).toBe(1);
      hookDone.open();
      expect(await submission.wait()).toMatchObject({ status: "unanswered", reason: "aborted" });
      expect(charged).toEqual([]);
      const entries = await root.entries();
      expect(entries.map((e) => e.kind)).toEqual([
        "durably.user",
        "durably.assistant",
        "durably.tool-result",
      ]);
      expect(toolResults(entries)).toEqual([notCalled("call_1_1", "charge")]);
      const [task] = (await harness.session.read.scanTasks({ kind: TOOL_TASK }, 10)).items;
      expect(task?.state).toMatchObject({
        status: "terminal",
        outcome: { kind: "aborted", reason: "the conversation was aborted" },
      });
      expect((await root.view()).live).toEqual({ run: null, generation: null, tools: {} });
    } finally {
      await harness.close();
    }
  });

  it("abort() and approve() issued together: the approved call does not run, and its result says it did not run", async () => {
    const charged: string[] = [];
    const charge = defineTool({
      name: "charge",
      description: "Charges the card",
      parameters: { type: "object" },
      replay: "unsafe",
      approval: "always",
      execute: () => {
        charged.push("$100");
        return { content: "charged $100" };
      },
    });
    const { harness, root } = await open([callCharge, { text: "done" }], [charge]);
    try {
      const submission = await root.submit({ type: "input", content: "pay" });
      await harness.whenIdle();
      const aborting = root.abort();
      // On the commit line after abort's first commit, before its task abort: the decision is stored.
      const decision = await root.approve("call_1_1", { approved: true });
      expect(decision).toMatchObject({ toolCallId: "call_1_1", approved: true });
      expect(await aborting).toBe(1);
      expect(await submission.wait()).toMatchObject({ status: "unanswered", reason: "aborted" });
      expect(charged).toEqual([]);
      const entries = await root.entries();
      expect(entries.map((e) => e.kind)).toEqual([
        "durably.user",
        "durably.assistant",
        "durably.approval",
        "durably.tool-result",
      ]);
      expect(toolResults(entries)).toEqual([notCalled("call_1_1", "charge")]);
    } finally {
      await harness.close();
    }
  });

  it("aborting while a sequential tool's first call runs: that one is aborted mid-run, the waiting second one is recorded as not run", async () => {
    const started = gate();
    const lines: string[] = [];
    const step = defineTool({
      name: "step",
      description: "One step at a time",
      parameters: { type: "object" },
      replay: "unsafe",
      sequential: true,
      execute: async (_args, api) => {
        lines.push(api.toolCallId);
        await api.output("step begun");
        started.open();
        return new Promise<never>((_resolve, reject) =>
          api.signal.addEventListener("abort", () => reject(api.signal.reason as Error), {
            once: true,
          }),
        );
      },
    });
    const { harness, root } = await open(
      [
        {
          toolCalls: [
            { name: "step", arguments: {} },
            { name: "step", arguments: {} },
          ],
        },
        { text: "done" },
      ],
      [step],
    );
    try {
      const submission = await root.submit({ type: "input", content: "go" });
      await started.promise;
      expect(await root.abort()).toBe(1);
      expect(await submission.wait()).toMatchObject({ status: "unanswered", reason: "aborted" });
      expect(lines).toEqual(["call_1_1"]);
      const results = toolResults(await root.entries()).sort((a, b) =>
        String(a.message?.role === "toolResult" && a.message.toolCallId).localeCompare(
          String(b.message?.role === "toolResult" && b.message.toolCallId),
        ),
      );
      expect(results).toEqual([
        {
          message: {
            role: "toolResult",
            toolCallId: "call_1_1",
            toolName: "step",
            content:
              "aborted: the tool call was aborted before it finished. Output so far:\nstep begun",
            isError: true,
          },
          data: { toolCallId: "call_1_1", aborted: true },
        },
        notCalled("call_1_2", "step"),
      ]);
    } finally {
      await harness.close();
    }
  });

  it("close() while beforeTool runs withdraws the intent: execute is not called, and the next open runs the unsafe call (attempt 1) instead of calling it interrupted", async () => {
    const memory = new MemoryStorage();
    const attempts: number[] = [];
    const charge = defineTool({
      name: "charge",
      description: "Charges the card",
      parameters: { type: "object" },
      replay: "unsafe",
      execute: (_args, api) => {
        attempts.push(api.attempt);
        return { content: "charged $100" };
      },
    });
    const hookRunning = gate();
    const hookDone = gate();
    let holdHook = true;
    const model = () => new ScriptedModel([callCharge, { text: "done" }]);
    const harness = await Harness.open(new Survivor(memory), {
      model: model(),
      tools: [charge],
      hooks: {
        beforeTool: async () => {
          if (!holdHook) return undefined;
          hookRunning.open();
          await hookDone.promise;
          return undefined;
        },
      },
    });
    const root = await harness.root();
    const submission = await root.submit({ type: "input", content: "pay" });
    await hookRunning.promise;
    const closing = harness.close();
    hookDone.open();
    expect(await closing).toEqual({ notStopped: [] });
    expect(attempts).toEqual([]);

    holdHook = false;
    const reopened = await Harness.open(new Survivor(memory), { model: model(), tools: [charge] });
    try {
      // Before the scheduler starts: the call is back where it was before its intent commit.
      const [stored] = (await reopened.session.read.scanTasks({ kind: TOOL_TASK }, 10)).items;
      expect(stored?.state).toEqual({ status: "pending", checkpoint: { phase: "start" } });
      const again = await reopened.root();
      expect(Object.values((await again.view()).live.tools)).toEqual([
        {
          taskId: stored?.id,
          toolCallId: "call_1_1",
          toolName: "charge",
          status: "pending",
          attempt: 0,
          output: "",
        },
      ]);
      await reopened.whenIdle();
      expect(attempts).toEqual([1]);
      expect(await reopened.session.read.submission(submission.id)).toMatchObject({
        status: "done",
      });
      expect(toolResults(await again.entries())).toEqual([
        {
          message: {
            role: "toolResult",
            toolCallId: "call_1_1",
            toolName: "charge",
            content: "charged $100",
            isError: false,
          },
          data: { toolCallId: "call_1_1", attempt: 1 },
        },
      ]);
    } finally {
      await reopened.close();
    }
  });
});

describe("abort after execute was called: the result that happened is stored", () => {
  it("a tool that finishes its work after the abort was requested (within stopGraceMs) has its real result stored, not 'aborted before it finished'", async () => {
    const running = gate();
    const finish = defineTool({
      name: "transfer",
      description: "Transfers money; cannot be stopped halfway",
      parameters: { type: "object" },
      replay: "unsafe",
      execute: async (_args, api) => {
        running.open();
        // The transfer completes regardless: the abort only makes it hurry.
        await new Promise<void>((resolve) =>
          api.signal.addEventListener("abort", () => resolve(), { once: true }),
        );
        return { content: "transferred $100", details: { id: "tx-1" } };
      },
    });
    const { harness, root } = await open(
      [{ toolCalls: [{ name: "transfer", arguments: {} }] }, { text: "done" }],
      [finish],
      { settings: { stopGraceMs: 2_000 } },
    );
    try {
      const submission = await root.submit({ type: "input", content: "send it" });
      await running.promise;
      expect(await root.abort()).toBe(1);
      expect(await submission.wait()).toMatchObject({ status: "unanswered", reason: "aborted" });
      expect(toolResults(await root.entries())).toEqual([
        {
          message: {
            role: "toolResult",
            toolCallId: "call_1_1",
            toolName: "transfer",
            content: "transferred $100",
            isError: false,
          },
          data: { toolCallId: "call_1_1", attempt: 1, details: { id: "tx-1" } },
        },
      ]);
      const [task] = (await harness.session.read.scanTasks({ kind: TOOL_TASK }, 10)).items;
      expect(task?.state).toMatchObject({ status: "terminal", outcome: { kind: "completed" } });
    } finally {
      await harness.close();
    }
  });

  it("a tool that returns only after stopGraceMs was given up on: the abort's result stays, the late result is dropped, and only the give-up is reported", async () => {
    const running = gate();
    const returned = gate();
    let finishLate: () => void = () => undefined;
    const late = defineTool({
      name: "late",
      description: "Ignores its signal",
      parameters: { type: "object" },
      replay: "unsafe",
      execute: async () => {
        running.open();
        await new Promise<void>((resolve) => (finishLate = resolve));
        returned.open();
        return { content: "finished late" };
      },
    });
    const errors: string[] = [];
    const { harness, root } = await open(
      [{ toolCalls: [{ name: "late", arguments: {} }] }, { text: "done" }],
      [late],
      {
        settings: { stopGraceMs: 30 },
        onError: (error) => errors.push((error as Error).name),
      },
    );
    try {
      const submission = await root.submit({ type: "input", content: "go" });
      await running.promise;
      await root.abort();
      expect(await submission.wait()).toMatchObject({ status: "unanswered", reason: "aborted" });
      finishLate();
      await returned.promise;
      await new Promise((resolve) => setTimeout(resolve, 20)); // the late return's commit attempt
      expect(errors).toEqual(["TaskStateError"]); // the scheduler's give-up report, nothing more
      expect(toolResults(await root.entries())).toEqual([
        {
          message: {
            role: "toolResult",
            toolCallId: "call_1_1",
            toolName: "late",
            content:
              "aborted: the tool call was aborted before it finished. No output was recorded.",
            isError: true,
          },
          data: { toolCallId: "call_1_1", aborted: true },
        },
      ]);
    } finally {
      await harness.close();
    }
  });
});

describe("executeToolCall and the abort signal", () => {
  function api(signal: AbortSignal): ToolApi {
    return {
      signal,
      toolCallId: "c1",
      conversationId: 1 as ConversationId,
      attempt: 1,
      output: () => Promise.resolve(),
      // Not used by these tools; a tool that does is tested through a harness.
      commit: () => Promise.reject(new Error("not in a harness")),
      memo: () => Promise.reject(new Error("not in a harness")),
      runConversation: () => Promise.reject(new Error("not in a harness")),
    };
  }
  const call = { type: "toolCall" as const, id: "c1", name: "charge", arguments: {} };

  it("does not call execute when the signal is already aborted: it throws the abort reason", async () => {
    const charged: string[] = [];
    const controller = new AbortController();
    const reason = new Error("aborted first");
    controller.abort(reason);
    await expect(
      executeToolCall(toolsByName([chargeTool(charged)]), call, api(controller.signal)),
    ).rejects.toBe(reason);
    expect(charged).toEqual([]);
  });

  it("returns the result execute returned although the signal aborted while it ran", async () => {
    const controller = new AbortController();
    const charge = defineTool({
      name: "charge",
      description: "Charges the card",
      parameters: { type: "object" },
      replay: "unsafe",
      execute: () => {
        controller.abort(new Error("too late"));
        return { content: "charged $100" };
      },
    });
    expect(await executeToolCall(toolsByName([charge]), call, api(controller.signal))).toEqual({
      message: {
        role: "toolResult",
        toolCallId: "c1",
        toolName: "charge",
        content: "charged $100",
        isError: false,
      },
    });
  });
});
