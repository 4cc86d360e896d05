import { describe, expect, it } from "vitest";
import {
  defineTask,
  GENERATION_TASK,
  Harness,
  LiveDoc,
  ROOT_CONVERSATION_ID as ROOT,
  ScriptedModel,
  TOOL_TASK,
  type TaskId,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";
import { GatedModel, text } from "./support/harness.js";

describe("Harness: liveness", () => {
  it("an app that settles a placed submission while its run streams keeps its settlement; the run still stores its answer and the next input is answered", async () => {
    const model = new GatedModel((_r, i) => text(`answer ${i + 1}`, " done"));
    model.hold();
    const harness = await Harness.open(new MemoryStorage(), { model });
    const root = await harness.root();
    const first = await root.submit({ type: "input", content: "one" });
    model.allow(1);
    await model.emittedAtLeast(1);
    const run = (await root.view()).live.run;
    await harness.session.commit((tx) =>
      tx.settleSubmission(first.id, { status: "unanswered", reason: "withdrawn" }),
    );
    model.open();
    const generation = await harness.scheduler.waitForTask(run?.taskId as TaskId);
    expect(generation.state).toMatchObject({
      status: "terminal",
      outcome: { kind: "completed" },
    });
    expect(await first.status()).toMatchObject({ status: "unanswered", reason: "withdrawn" });
    const answer = (await root.entries()).at(-1);
    expect(answer?.model?.[0]).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "answer 1 done" }],
    });
    expect((await root.view()).live.run).toBeNull();
    const second = await root.submit({ type: "input", content: "two" });
    expect(await second.wait()).toMatchObject({ status: "done" });
    await harness.close();
  });

  it("aborting a run whose tool task is stored at a newer version orphans the tool with a result naming why, then the run ends aborted", async () => {
    const harness = await Harness.open(new MemoryStorage(), {
      model: new ScriptedModel([{ text: "never asked" }]),
    });
    const NewerTool = defineTask({
      name: TOOL_TASK,
      version: 2,
      initial: () => ({ phase: "start" }),
      phases: { start: () => undefined },
      abort: () => undefined,
    });
    const Generation = defineTask({
      name: GENERATION_TASK,
      version: 1,
      initial: () => ({ phase: "stream", round: 1 }),
      phases: { stream: () => undefined },
      abort: () => undefined,
    });
    // What a newer process left: a run whose round waits on a tool task only it can run.
    const { submissionId, generation, tool } = await harness.session.commit(async (tx) => {
      const live = await tx.doc(LiveDoc, ROOT);
      const submission = await tx.createSubmission(ROOT, { type: "input", content: "use it" });
      const user = await tx.appendEntry(ROOT, {
        kind: "durably.user",
        model: [{ role: "user", content: "use it" }],
      });
      await tx.placeSubmission(submission.id, user.id);
      const ownerless = { ownership: { kind: "ownerless" as const }, conversationId: ROOT };
      const generation = await tx.createTask(
        Generation,
        { submissionId: submission.id },
        ownerless,
      );
      await tx.appendEntry(ROOT, {
        kind: "durably.assistant",
        byTaskId: generation,
        model: [
          {
            role: "assistant",
            content: [{ type: "toolCall", id: "c1", name: "future", arguments: {} }],
            stopReason: "toolUse",
          },
        ],
      });
      const tool = await tx.createTask(
        NewerTool,
        { toolCallId: "c1", toolName: "future", arguments: {} },
        { ownership: { kind: "task", taskId: generation } },
      );
      live.run = { submissionId: submission.id, taskId: generation };
      live.tools[String(tool)] = {
        taskId: tool,
        toolCallId: "c1",
        toolName: "future",
        status: "pending",
        attempt: 0,
        output: "",
      };
      return { submissionId: submission.id, generation, tool };
    });
    await harness.session.commit(async (tx) => {
      const task = await tx.task(generation);
      await tx.putTask({
        ...task!,
        state: {
          status: "waiting",
          checkpoint: { phase: "stream", round: 2 },
          on: [tool],
          policy: "allSettled",
        },
      });
    });
    await harness.whenIdle();
    expect(harness.scheduler.inspect().blocked.map((t) => t.id)).toEqual([tool]);
    expect(await (await harness.root()).abort()).toBe(1);
    const settled = await (await (await harness.root()).submission(submissionId)).wait();
    expect(settled).toMatchObject({ status: "unanswered", reason: "aborted" });
    const reason = "stored at version 2, newer than the registered definition (version 1)";
    expect((await harness.session.read.task(tool))?.state).toEqual({
      status: "terminal",
      outcome: { kind: "orphaned", reason },
    });
    const result = (await (await harness.root()).entries()).find(
      (e) => e.kind === "durably.tool-result",
    );
    expect(result?.model?.[0]).toEqual({
      role: "toolResult",
      toolCallId: "c1",
      toolName: "future",
      content: `error: the tool call was abandoned: this process cannot run it (${reason}). No output was recorded.`,
      isError: true,
    });
    expect((await (await harness.root()).view()).live).toEqual({
      run: null,
      generation: null,
      tools: {},
    });
    await harness.close();
  });

  it("Harness.open refuses a clock that is not a function", async () => {
    await expect(
      Harness.open(new MemoryStorage(), { model: new ScriptedModel([]), clock: 5 as never }),
    ).rejects.toThrow(/Harness.open: options.clock must be a function/);
  });
});
