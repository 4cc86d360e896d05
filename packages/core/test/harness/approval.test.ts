import { describe, expect, it } from "vitest";
import {
  ApprovalNotPending,
  defineTool,
  Harness,
  ScriptedModel,
  TOOL_TASK,
  type ConversationView,
  type HarnessOptions,
  type ScriptedTurn,
  type Tool,
  type ToolApproval,
} from "../../src/index.js";
import { Survivor } from "../support/faulty-storage.js";
import { MemoryStorage } from "../support/memory.js";

/** A "deploy" tool that records each execution. */
function deployTool(ran: string[], approval: ToolApproval<{ env: string }> = "always"): Tool {
  return defineTool<{ env: string }>({
    name: "deploy",
    description: "Deploys",
    parameters: { type: "object", properties: { env: { type: "string" } }, required: ["env"] },
    replay: "unsafe",
    approval,
    execute: ({ env }) => {
      ran.push(env);
      return { content: `deployed to ${env}` };
    },
  });
}

const callDeploy = (env = "prod"): ScriptedTurn => ({
  text: "deploying",
  toolCalls: [{ name: "deploy", arguments: { env } }],
});

async function open(turns: ScriptedTurn[], tools: Tool[], options: Partial<HarnessOptions> = {}) {
  const model = new ScriptedModel(turns);
  const storage = new MemoryStorage();
  const harness = await Harness.open(storage, { model, tools, ...options });
  return { model, harness, root: await harness.root() };
}

const kinds = (entries: readonly { kind: string }[]) => entries.map((e) => e.kind).join(", ");

describe("tool approval > a call that needs approval waits for a person", () => {
  it("is listed as pending, holds no slot, lets whenIdle resolve, and runs once when approved", async () => {
    const ran: string[] = [];
    const { model, harness, root } = await open(
      [callDeploy(), { text: "done" }],
      [deployTool(ran)],
    );
    try {
      const submission = await root.submit({ type: "input", content: "ship it" });
      await harness.whenIdle();
      expect(ran).toEqual([]);
      const pending = await root.approvals();
      expect(
        pending.map(({ taskId, requestedAt, ...rest }) => [
          typeof taskId,
          typeof requestedAt,
          rest,
        ]),
      ).toEqual([
        [
          "number",
          "number",
          { toolCallId: "call_1_1", toolName: "deploy", arguments: { env: "prod" } },
        ],
      ]);
      expect((await submission.status()).status).toBe("placed");

      const decision = await root.approve("call_1_1", { approved: true, reason: "looks fine" });
      expect(decision).toMatchObject({
        toolCallId: "call_1_1",
        approved: true,
        reason: "looks fine",
      });
      const settled = await submission.wait();
      expect(settled.status).toBe("done");
      expect(ran).toEqual(["prod"]);
      const entries = await root.entries();
      expect(kinds(entries)).toBe(
        "durably.user, durably.assistant, durably.approval, durably.tool-result, durably.assistant",
      );
      expect(entries[2]?.data).toMatchObject({
        toolCallId: "call_1_1",
        approved: true,
        reason: "looks fine",
        toolName: "deploy",
        submissionId: decision.submissionId,
      });
      expect(entries[2]?.id).toBe(decision.entryId);
      expect(entries[3]?.model?.[0]).toMatchObject({ content: "deployed to prod", isError: false });
      // The decision is a settled "write" submission; the model never sees it.
      const stored = await (await root.submission(decision.submissionId)).status();
      expect(stored).toMatchObject({ type: "write", status: "done", answer: decision.entryId });
      expect(JSON.stringify(model.requests[1]?.messages)).not.toContain("looks fine");
      expect(await root.approvals()).toEqual([]);
      expect(Object.keys((await root.view()).live.tools)).toEqual([]);
    } finally {
      await harness.close();
    }
  });

  it("lets another conversation run meanwhile with a single concurrency slot", async () => {
    const ran: string[] = [];
    const model = new ScriptedModel([callDeploy(), { text: "done" }]);
    const harness = await Harness.open(new MemoryStorage(), {
      model,
      tools: [deployTool(ran)],
      settings: { concurrency: 1 },
    });
    try {
      const root = await harness.root();
      await root.submit({ type: "input", content: "ship it" });
      await harness.whenIdle();
      expect(await root.approvals()).toHaveLength(1);
      // The other conversation's run gets the one slot and reaches its own approval.
      const other = await harness.createConversation();
      const second = await other.submit({ type: "input", content: "ship it too" });
      await harness.whenIdle();
      expect((await other.approvals()).map((a) => a.toolCallId)).toEqual(["call_1_1"]);
      expect(ran).toEqual([]);
      const first = (await root.submissions())[0];
      await root.approve("call_1_1", { approved: true });
      await other.approve("call_1_1", { approved: true });
      expect((await first?.wait())?.status).toBe("done");
      expect((await second.wait()).status).toBe("done");
      expect(ran).toEqual(["prod", "prod"]);
    } finally {
      await harness.close();
    }
  });

  it("gives the model the error result 'denied: <reason>' and the run goes on", async () => {
    const ran: string[] = [];
    const { model, harness, root } = await open(
      [callDeploy(), { text: "ok, I will not deploy" }],
      [deployTool(ran)],
    );
    try {
      const submission = await root.submit({ type: "input", content: "ship it" });
      await harness.whenIdle();
      await root.approve("call_1_1", { approved: false, reason: "frozen until Monday" });
      expect((await submission.wait()).status).toBe("done");
      expect(ran).toEqual([]);
      const result = model.requests[1]?.messages.find((m) => m.role === "toolResult");
      expect(result).toEqual({
        role: "toolResult",
        toolCallId: "call_1_1",
        toolName: "deploy",
        content: "denied: frozen until Monday",
        isError: true,
      });
      const stored = (await root.entries()).find((e) => e.kind === "durably.tool-result");
      expect(stored?.data).toMatchObject({ toolCallId: "call_1_1", denied: true });
    } finally {
      await harness.close();
    }
  });

  it("gives the model the default reason for a denial whose reason is blank", async () => {
    const ran: string[] = [];
    const { model, harness, root } = await open([callDeploy(), { text: "ok" }], [deployTool(ran)]);
    try {
      const submission = await root.submit({ type: "input", content: "ship it" });
      await harness.whenIdle();
      await root.approve("call_1_1", { approved: false, reason: "  " });
      expect((await submission.wait()).status).toBe("done");
      const result = model.requests[1]?.messages.find((m) => m.role === "toolResult");
      expect(result).toMatchObject({ content: "denied: the call was not approved", isError: true });
    } finally {
      await harness.close();
    }
  });

  it("asks only when the approval function says so, with the parsed arguments", async () => {
    const ran: string[] = [];
    const seen: unknown[] = [];
    const tool = deployTool(ran, (args, context) => {
      seen.push([args, context.toolName, context.toolCallId]);
      return args.env === "prod";
    });
    const { harness, root } = await open(
      [
        {
          toolCalls: [
            { name: "deploy", arguments: { env: "staging" } },
            { name: "deploy", arguments: { env: "prod" } },
          ],
        },
        { text: "done" },
      ],
      [tool],
    );
    try {
      const submission = await root.submit({ type: "input", content: "ship both" });
      await harness.whenIdle();
      expect(ran).toEqual(["staging"]);
      expect((await root.approvals()).map((a) => a.arguments)).toEqual([{ env: "prod" }]);
      expect(seen).toEqual([
        [{ env: "staging" }, "deploy", "call_1_1"],
        [{ env: "prod" }, "deploy", "call_1_2"],
      ]);
      await root.approve("call_1_2", { approved: true });
      expect((await submission.wait()).status).toBe("done");
      expect(ran).toEqual(["staging", "prod"]);
    } finally {
      await harness.close();
    }
  });

  it("asks when the approval function throws, carrying its error as a note", async () => {
    const ran: string[] = [];
    const tool = deployTool(ran, () => {
      throw new RangeError("policy service down");
    });
    const { harness, root } = await open([callDeploy(), { text: "done" }], [tool]);
    try {
      await root.submit({ type: "input", content: "ship it" });
      await harness.whenIdle();
      const [pending] = await root.approvals();
      expect(pending?.note).toBe("approval(deploy) threw RangeError: policy service down");
      expect(ran).toEqual([]);
    } finally {
      await harness.close();
    }
  });

  it("a sequential tool's approved calls still run one at a time in call order", async () => {
    const ran: string[] = [];
    const tool = defineTool<{ env: string }>({
      name: "deploy",
      description: "Deploys",
      parameters: { type: "object", properties: { env: { type: "string" } }, required: ["env"] },
      replay: "unsafe",
      sequential: true,
      approval: "always",
      execute: async ({ env }) => {
        ran.push(`start ${env}`);
        await new Promise((r) => setTimeout(r, 10));
        ran.push(`end ${env}`);
        return { content: `deployed to ${env}` };
      },
    });
    const { harness, root } = await open(
      [
        {
          toolCalls: [
            { name: "deploy", arguments: { env: "a" } },
            { name: "deploy", arguments: { env: "b" } },
          ],
        },
        { text: "done" },
      ],
      [tool],
    );
    try {
      const submission = await root.submit({ type: "input", content: "ship both" });
      await harness.whenIdle();
      expect((await root.approvals()).map((a) => a.toolCallId)).toEqual(["call_1_1", "call_1_2"]);
      // Approved in the other order: the second still waits for the first to end.
      await root.approve("call_1_2", { approved: true });
      await harness.whenIdle();
      expect(ran).toEqual([]);
      await root.approve("call_1_1", { approved: true });
      expect((await submission.wait()).status).toBe("done");
      expect(ran).toEqual(["start a", "end a", "start b", "end b"]);
    } finally {
      await harness.close();
    }
  });

  it("shows the pending approval to watchers, and its end", async () => {
    const ran: string[] = [];
    const { harness, root } = await open([callDeploy(), { text: "done" }], [deployTool(ran)]);
    const views: ConversationView[] = [];
    const stop = root.watch((view) => {
      views.push(view);
    });
    try {
      const submission = await root.submit({ type: "input", content: "ship it" });
      await harness.whenIdle();
      const asking = views.find((v) =>
        Object.values(v.live.tools).some((s) => s.status === "approval"),
      );
      expect(Object.values(asking?.live.tools ?? {})[0]).toMatchObject({
        toolCallId: "call_1_1",
        status: "approval",
        approval: { arguments: { env: "prod" } },
      });
      await root.approve("call_1_1", { approved: true });
      await submission.wait();
      await harness.whenIdle();
      expect(Object.keys(views.at(-1)?.live.tools ?? { x: 1 })).toEqual([]);
    } finally {
      stop();
      await harness.close();
    }
  });

  it("denies a waiting call when the conversation is aborted", async () => {
    const ran: string[] = [];
    const { harness, root } = await open([callDeploy(), { text: "done" }], [deployTool(ran)]);
    try {
      const submission = await root.submit({ type: "input", content: "ship it" });
      await harness.whenIdle();
      expect(await root.abort()).toBe(1);
      const settled = await submission.wait();
      expect(settled).toMatchObject({ status: "unanswered", reason: "aborted" });
      const result = (await root.entries()).find((e) => e.kind === "durably.tool-result");
      expect(result?.model?.[0]).toMatchObject({
        content: "denied: the conversation was aborted before anyone decided",
        isError: true,
      });
      expect(result?.data).toMatchObject({ aborted: true, denied: true });
      expect(ran).toEqual([]);
      await expect(root.approve("call_1_1", { approved: true })).rejects.toThrow(
        ApprovalNotPending,
      );
    } finally {
      await harness.close();
    }
  });
});

describe("tool approval > a call whose owner is aborting", () => {
  it("is refused as being aborted before the scheduler's marks reach it, stores nothing, and never runs", async () => {
    const memory = new MemoryStorage();
    const ran: string[] = [];
    const options = () => ({
      model: new ScriptedModel([callDeploy(), { text: "done" }]),
      tools: [deployTool(ran)],
    });
    const first = await Harness.open(new Survivor(memory), options());
    const submission = await (await first.root()).submit({ type: "input", content: "ship it" });
    await first.whenIdle();
    await first.close();

    const harness = await Harness.open(new Survivor(memory), options());
    try {
      // Before the scheduler starts: the call's owner is marked, the call itself not yet,
      // as between an owner's abort and the scheduler's marking commit.
      const [call] = (await harness.session.read.scanTasks({ kind: TOOL_TASK }, 10)).items;
      expect(call).toMatchObject({ abortRequested: false, state: { status: "pending" } });
      await harness.session.commit(async (tx) => {
        const owner = await tx.task(call!.owner!);
        await tx.putTask({ ...owner!, abortRequested: true });
      });
      const root = await harness.root();
      const entriesBefore = (await root.entries()).length;
      const error: unknown = await root
        .approve("call_1_1", { approved: true, requestId: "r1" })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApprovalNotPending);
      expect((error as Error).message).toBe(
        `approve: tool call "call_1_1" of conversation 1 is not waiting for approval: its task ${call!.id} is being aborted`,
      );
      expect(await harness.session.read.submissionByRequest(root.id, "r1")).toBeUndefined();
      expect((await root.entries()).length).toBe(entriesBefore);

      await harness.resume();
      await harness.whenIdle();
      expect(ran).toEqual([]);
      expect(await harness.session.read.task(call!.id)).toMatchObject({
        abortRequested: true,
        state: { status: "terminal", outcome: { kind: "aborted" } },
      });
      expect((await harness.session.read.submission(submission.id))?.status).toBe("unanswered");
    } finally {
      await harness.close();
    }
  });
});

describe("tool approval > a decision is applied once", () => {
  it("returns the stored decision for a retried requestId and stores nothing more", async () => {
    const ran: string[] = [];
    const { harness, root } = await open([callDeploy(), { text: "done" }], [deployTool(ran)]);
    try {
      const submission = await root.submit({ type: "input", content: "ship it" });
      await harness.whenIdle();
      const first = await root.approve("call_1_1", { approved: true, requestId: "ok-1" });
      await submission.wait();
      const again = await root.approve("call_1_1", { approved: true, requestId: "ok-1" });
      expect(again).toEqual(first);
      expect(ran).toEqual(["prod"]);
      expect((await root.submissions()).map((s) => s.submitted.type)).toEqual(["input", "write"]);
      await expect(
        root.approve("call_1_1", { approved: false, requestId: "ok-1" }),
      ).rejects.toThrow(/requestId "ok-1" was used by submission \d+ for a different decision/);
    } finally {
      await harness.close();
    }
  });
});

describe("tool approval > a provider that reuses call ids across answers", () => {
  it("pairs each call with its own result; a requestId built from the taskId decides each call, and its retry returns its decision", async () => {
    const ran: string[] = [];
    const reused = (env: string): ScriptedTurn => ({
      toolCalls: [{ id: "call_0", name: "deploy", arguments: { env } }],
    });
    const { model, harness, root } = await open(
      [reused("staging"), { text: "staged" }, reused("prod"), { text: "shipped" }],
      [deployTool(ran)],
    );
    try {
      const first = await root.submit({ type: "input", content: "stage it" });
      await harness.whenIdle();
      const [staging] = await root.approvals();
      const firstDecision = await root.approve("call_0", {
        approved: true,
        requestId: `review-${staging!.taskId}`,
      });
      expect((await first.wait()).status).toBe("done");

      const second = await root.submit({ type: "input", content: "ship it" });
      await harness.whenIdle();
      const [prod] = await root.approvals();
      expect(prod).toMatchObject({ toolCallId: "call_0", arguments: { env: "prod" } });
      expect(prod!.taskId).not.toBe(staging!.taskId);
      // A client retrying the first decision (its answer lost) gets it back, and nothing more is stored.
      expect(
        await root.approve("call_0", { approved: true, requestId: `review-${staging!.taskId}` }),
      ).toEqual(firstDecision);
      expect(await root.approvals()).toHaveLength(1);

      await root.approve("call_0", { approved: true, requestId: `review-${prod!.taskId}` });
      expect((await second.wait()).status).toBe("done");
      expect(ran).toEqual(["staging", "prod"]);
      // The last request: each reused id followed by its own answer's result.
      const results = model.requests
        .at(-1)!
        .messages.filter((m) => m.role === "toolResult")
        .map((m) => (m as { content: unknown }).content);
      expect(results).toEqual(["deployed to staging", "deployed to prod"]);
    } finally {
      await harness.close();
    }
  });
});

describe("tool approval > bad input is refused and stores nothing", () => {
  it("rejects an unknown or already decided call with ApprovalNotPending", async () => {
    const ran: string[] = [];
    const { harness, root } = await open([callDeploy(), { text: "done" }], [deployTool(ran)]);
    try {
      const submission = await root.submit({ type: "input", content: "ship it" });
      await harness.whenIdle();
      const commits: string[][] = [];
      harness.session.subscribeCommits((event) => commits.push(event.writes.map((w) => w.type)));
      const unknown = await root.approve("call_9_9", { approved: true }).catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(ApprovalNotPending);
      expect((unknown as ApprovalNotPending).code).toBe("APPROVAL_NOT_PENDING");
      expect((unknown as Error).message).toBe(
        'approve: tool call "call_9_9" of conversation 1 is not waiting for approval: no call of that id is pending (it is unknown, or already has its result)',
      );
      expect(commits).toEqual([]);

      await root.approve("call_1_1", { approved: true });
      await submission.wait();
      await harness.whenIdle();
      commits.length = 0;
      await expect(root.approve("call_1_1", { approved: false })).rejects.toThrow(
        ApprovalNotPending,
      );
      expect(commits).toEqual([]);
      expect((await root.submissions()).length).toBe(2);
    } finally {
      await harness.close();
    }
  });

  it("rejects a malformed decision with a TypeError naming the field", async () => {
    const { harness, root } = await open([{ text: "hi" }], []);
    try {
      await expect(root.approve("", { approved: true })).rejects.toThrow(
        'approve: toolCallId must be a non-empty string, got ""',
      );
      await expect(root.approve("c", { approved: "yes" } as never)).rejects.toThrow(
        'approve: approved must be true or false, got "yes"',
      );
      await expect(root.approve("c", { approved: true, why: "x" } as never)).rejects.toThrow(
        "approve: why is not a decision field (approved, reason, requestId)",
      );
    } finally {
      await harness.close();
    }
  });

  it('rejects an approval that is neither "always" nor a function at defineTool', () => {
    expect(() => deployTool([], "sometimes" as never)).toThrow(
      'tool "deploy": approval must be "always" or a function (args, context) => boolean',
    );
  });
});
