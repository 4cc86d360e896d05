import {
  defineTask,
  defineTool,
  GENERATION_TASK,
  Harness,
  LiveDoc,
  ROOT_CONVERSATION_ID as ROOT,
  ScriptedModel,
  USER_ENTRY,
  type Model,
  type ModelEvent,
  type ModelRequest,
  type ModelStreamOptions,
  StoragePoisoned,
  type TaskId,
  type ToolResultMessage,
} from "@durably/core";
import { FaultInjector } from "../session/faults.js";
import { check } from "./invariants.js";
import type { HarnessScenario } from "./scenarios.js";

/** Rejects with a message naming `what` when `promise` takes longer than `ms`: a run that never ends fails, never hangs. */
async function within<T>(promise: Promise<T>, what: string, ms = 5_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * A model whose first answer streams one chunk and then stalls until its
 * signal aborts (a long answer being streamed); every later request is
 * answered "answer <n>".
 */
class StallingModel implements Model {
  private calls = 0;
  private readonly firstChunk = deferred();
  /** Resolves once the stalling answer's first chunk was yielded. */
  readonly streaming = this.firstChunk.promise;

  async *stream(_request: ModelRequest, options: ModelStreamOptions = {}) {
    this.calls += 1;
    const signal = options.signal;
    if (this.calls === 1) {
      yield { type: "text", delta: "partial answer" } satisfies ModelEvent;
      this.firstChunk.resolve();
      await new Promise<never>((_resolve, reject) => {
        if (signal?.aborted) reject(signal.reason as Error);
        signal?.addEventListener("abort", () => reject(signal.reason as Error), { once: true });
      });
    }
    yield { type: "text", delta: `answer ${this.calls}` } satisfies ModelEvent;
    yield {
      type: "done",
      stopReason: "stop",
      usage: { inputTokens: 1, outputTokens: 1 },
    } satisfies ModelEvent;
  }
}

/** The generation as a newer deploy defines it: same kind, version 2 (this process runs version 1). */
const NewerGeneration = defineTask({
  name: GENERATION_TASK,
  version: 2,
  initial: () => ({ phase: "stream", round: 1 }),
  phases: { stream: () => undefined },
  abort: () => undefined,
});

const liveRun = async (harness: Harness) => (await (await harness.root()).view()).live.run;

export const livenessScenarios: readonly HarnessScenario[] = [
  {
    name: "an app that settles a placed submission itself and then aborts: the run ends aborted, the app's settlement stands, the next input is answered",
    async run(storage) {
      const model = new StallingModel();
      const harness = await Harness.open(storage, { model });
      try {
        const root = await harness.root();
        const first = await root.submit({ type: "input", content: "one" });
        await within(model.streaming, "the first answer starts streaming");
        const run = await liveRun(harness);
        check(run?.submissionId === first.id, () => `live.run: ${JSON.stringify(run)}`);
        await harness.session.commit((tx) =>
          tx.settleSubmission(first.id, { status: "unanswered", reason: "withdrawn" }),
        );
        const aborted = await root.abort();
        check(aborted === 1, () => `conversation.abort() aborted ${aborted}, expected 1 (the run)`);
        const generation = await within(
          harness.scheduler.waitForTask(run.taskId as TaskId),
          `generation task ${run.taskId} ends (inspect: ${JSON.stringify(harness.scheduler.inspect().blocked)})`,
        );
        check(
          generation.state.status === "terminal" && generation.state.outcome.kind === "aborted",
          () => `generation ${run.taskId}: ${JSON.stringify(generation.state)}, expected aborted`,
        );
        const settled = await first.status();
        check(
          settled.status === "unanswered" && settled.reason === "withdrawn",
          () => `submission ${first.id}: ${JSON.stringify(settled)}, expected the app's settlement`,
        );
        check((await liveRun(harness)) === null, () => "live.run must be cleared");
        const next = await root.submit({ type: "input", content: "two" });
        const answered = await within(next.wait(), `the next input (submission ${next.id})`);
        check(
          answered.status === "done",
          () => `next submission ${next.id}: ${JSON.stringify(answered)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "aborting a conversation whose generation is blocked (stored by a newer version) ends it orphaned, settles its submission and answers the next input",
    async run(storage) {
      const harness = await Harness.open(storage, {
        model: new ScriptedModel([{ text: "answered by this version" }]),
      });
      try {
        const root = await harness.root();
        // What a newer process placed before this one took over: one commit, as placement does.
        const { submissionId, taskId } = await harness.session.commit(async (tx) => {
          const live = await tx.doc(LiveDoc, ROOT);
          const submission = await tx.createSubmission(ROOT, {
            type: "input",
            content: "asked under version 2",
          });
          const entry = await tx.appendEntry(ROOT, {
            kind: USER_ENTRY,
            model: [{ role: "user", content: "asked under version 2" }],
            data: { submissionId: submission.id },
          });
          await tx.placeSubmission(submission.id, entry.id);
          const id = await tx.createTask(
            NewerGeneration,
            { submissionId: submission.id },
            { ownership: { kind: "ownerless" }, conversationId: ROOT },
          );
          live.run = { submissionId: submission.id, taskId: id };
          return { submissionId: submission.id, taskId: id };
        });
        await harness.whenIdle();
        const blocked = harness.scheduler.inspect().blocked.map((t) => t.id);
        check(
          blocked.length === 1 && blocked[0] === taskId,
          () => `blocked: ${JSON.stringify(blocked)}, expected [${taskId}]`,
        );
        const aborted = await root.abort();
        check(aborted === 1, () => `conversation.abort() aborted ${aborted}, expected 1`);
        const generation = await within(
          harness.scheduler.waitForTask(taskId),
          `blocked generation ${taskId} ends after the abort`,
        );
        const reason = "stored at version 2, newer than the registered definition (version 1)";
        check(
          JSON.stringify(generation.state) ===
            JSON.stringify({ status: "terminal", outcome: { kind: "orphaned", reason } }),
          () => `generation ${taskId}: ${JSON.stringify(generation.state)}`,
        );
        const settled = await (await root.submission(submissionId)).status();
        check(
          settled.status === "unanswered" &&
            settled.reason === "orphaned" &&
            JSON.stringify(settled.detail) === JSON.stringify({ reason }),
          () => `submission ${submissionId}: ${JSON.stringify(settled)}`,
        );
        check((await liveRun(harness)) === null, () => "live.run must be cleared");
        const next = await root.submit({ type: "input", content: "and now?" });
        const answered = await within(next.wait(), `the next input (submission ${next.id})`);
        check(answered.status === "done", () => `next: ${JSON.stringify(answered)}`);
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "aborting one of two running tool tasks: the sibling goes on, the run finishes, the aborted tool's result is an error holding only its stored output",
    async run(storage) {
      const slowStarted = deferred();
      const steadyStarted = deferred();
      const steadyRelease = deferred();
      const slow = defineTool({
        name: "slow",
        description: "Streams a line, then runs until aborted",
        parameters: { type: "object" },
        replay: "unsafe",
        execute: async (_args, api) => {
          await api.output("slow: step 1\n");
          slowStarted.resolve();
          return new Promise<never>((_resolve, reject) =>
            api.signal.addEventListener("abort", () => reject(api.signal.reason as Error), {
              once: true,
            }),
          );
        },
      });
      const steady = defineTool({
        name: "steady",
        description: "Streams a line, then finishes when released",
        parameters: { type: "object" },
        replay: "unsafe",
        execute: async (_args, api) => {
          await api.output("steady: working\n");
          steadyStarted.resolve();
          await steadyRelease.promise;
          return { content: "steady done" };
        },
      });
      const model = new ScriptedModel([
        {
          toolCalls: [
            { name: "slow", arguments: {} },
            { name: "steady", arguments: {} },
          ],
        },
        { text: "both handled" },
      ]);
      const harness = await Harness.open(storage, { model, tools: [slow, steady] });
      try {
        const root = await harness.root();
        const submission = await root.submit({ type: "input", content: "do both" });
        await within(
          Promise.all([slowStarted.promise, steadyStarted.promise]),
          "both tools started",
        );
        const slots = Object.values((await root.view()).live.tools);
        const slowTask = slots.find((s) => s.toolName === "slow")?.taskId as TaskId;
        const steadyTask = slots.find((s) => s.toolName === "steady")?.taskId as TaskId;
        check(await harness.scheduler.abortTask(slowTask), () => `abortTask(${slowTask})`);
        const ended = await within(
          harness.scheduler.waitForTask(slowTask),
          `aborted tool task ${slowTask}`,
        );
        check(
          ended.state.status === "terminal" && ended.state.outcome.kind === "aborted",
          () => `tool task ${slowTask}: ${JSON.stringify(ended.state)}`,
        );
        const sibling = await harness.session.read.task(steadyTask);
        check(
          sibling?.state.status === "running" && !sibling.abortRequested,
          () => `sibling ${steadyTask} must run on unmarked: ${JSON.stringify(sibling)}`,
        );
        steadyRelease.resolve();
        const settled = await within(submission.wait(), "the run settles");
        check(settled.status === "done", () => `settled: ${JSON.stringify(settled)}`);
        const results = new Map<string, ToolResultMessage>();
        for (const entry of await root.entries())
          for (const m of entry.model ?? [])
            if (m.role === "toolResult") results.set(m.toolName, m);
        const aborted = results.get("slow");
        check(
          aborted?.isError === true &&
            aborted.content ===
              "aborted: the tool call was aborted before it finished. Output so far:\nslow: step 1\n",
          () => `the aborted tool's result: ${JSON.stringify(aborted)}`,
        );
        const done = results.get("steady");
        check(
          done?.isError === false && done.content === "steady done",
          () => `the sibling's result: ${JSON.stringify(done)}`,
        );
        const last = (await root.entries()).at(-1)?.model?.[0];
        check(
          last?.role === "assistant" && JSON.stringify(last.content).includes("both handled"),
          () => `the run's answer: ${JSON.stringify(last)}`,
        );
      } finally {
        steadyRelease.resolve();
        await harness.close();
      }
    },
  },
  {
    name: "a storage commit that fails mid-run fails the session: submission.wait() and scheduler.waitForTask() reject with SessionFailed carrying the storage error, and close resolves",
    async run(storage) {
      const faults = new FaultInjector(storage);
      const model = new StallingModel();
      const harness = await Harness.open(faults, { model });
      try {
        const root = await harness.root();
        const submission = await root.submit({ type: "input", content: "one" });
        await within(model.streaming, "the answer starts streaming");
        const run = await liveRun(harness);
        const outcome = (promise: Promise<unknown>) =>
          promise.then(
            (value) => ({ resolved: value }),
            (error: unknown) => ({ rejected: error }),
          );
        const waits = [
          ["submission.wait()", outcome(submission.wait())],
          [
            `scheduler.waitForTask(${run?.taskId})`,
            outcome(harness.scheduler.waitForTask(run?.taskId as TaskId)),
          ],
        ] as const;
        const poisoned = new StoragePoisoned("injected: the write failed with EIO", {
          cause: new Error("EIO"),
        });
        faults.nextCommit = () => Promise.reject(poisoned);
        await harness.session
          .commit((tx) => tx.appendEntry(ROOT, { kind: "app.note" }))
          .catch(() => undefined);
        for (const [what, pending] of waits) {
          const result = (await within(pending, `${what} after the session failed`)) as {
            rejected?: Error;
          };
          check(
            result.rejected?.name === "SessionFailed" && result.rejected.cause === poisoned,
            () =>
              `${what}: expected SessionFailed caused by the injected StoragePoisoned, got ${JSON.stringify(result)}`,
          );
        }
      } finally {
        await within(harness.close(), "harness.close() after the session failed");
      }
    },
  },
];
