import { describe, expect, it } from "vitest";
import {
  defineTool,
  deriveContext,
  Harness,
  ScriptedModel,
  TOOL_TASK,
  type ConversationEvent,
  type EntryRecord,
  type LiveToolSlot,
  type SubmissionId,
  type Tool,
} from "../../src/index.js";
import { Survivor } from "../support/faulty-storage.js";
import { MemoryStorage } from "../support/memory.js";
import { gate } from "./support/harness.js";

/**
 * "fetch": a safe tool that streams `lines(attempt)`, then works until
 * `done` resolves (it returns "fetched") or its signal aborts (a close
 * mid-call: the next open reruns it).
 */
function fetchTool(
  lines: (attempt: number) => string[],
  streamed?: () => void,
  done = new Promise<void>(() => undefined),
): Tool {
  return defineTool({
    name: "fetch",
    description: "Fetches pages",
    parameters: { type: "object" },
    replay: "safe",
    execute: async (_args, api) => {
      for (const line of lines(api.attempt)) await api.output(line);
      streamed?.();
      await new Promise<void>((resolve, reject) => {
        void done.then(resolve);
        api.signal.addEventListener("abort", () => reject(api.signal.reason as Error), {
          once: true,
        });
      });
      return { content: "fetched" };
    },
  });
}

const crashedLines = () => ["page 1\n", "page 2\n", "page 3\n"];
/** Keeps two lines, so the crashed attempt's output has a cut too. */
const settings = { toolOutput: { maxLines: 2 } };
const model = () =>
  new ScriptedModel([{ toolCalls: [{ name: "fetch", arguments: {} }] }, { text: "done" }]);

/** What the slot and the aborted result hold of the crashed attempt's output. */
const crashedOutput = { output: "page 2\npage 3\n", outputCut: { bytes: 7, lines: 1, chars: 7 } };
const abortedWithCrashedOutput = {
  message: {
    role: "toolResult",
    toolCallId: "call_1_1",
    toolName: "fetch",
    content:
      "aborted: the tool call was aborted before it finished. Output so far:\n[earlier output cut: 1 line, 7 bytes]\npage 2\npage 3\n",
    isError: true,
  },
  data: { toolCallId: "call_1_1", aborted: true },
};

const toolResults = (entries: readonly EntryRecord[]) =>
  entries
    .filter((e) => e.kind === "durably.tool-result")
    .map((e) => ({ message: e.model?.[0], data: e.data }));

async function slotOf(harness: Harness): Promise<LiveToolSlot | undefined> {
  return Object.values((await (await harness.root()).view()).live.tools)[0];
}

/** Runs the call's first attempt until it has streamed, then closes mid-call (what a crash leaves). */
async function crashMidCall(memory: MemoryStorage): Promise<SubmissionId> {
  const streamed = gate();
  const harness = await Harness.open(new Survivor(memory), {
    model: model(),
    tools: [fetchTool(crashedLines, streamed.open)],
    settings,
  });
  const submission = await (await harness.root()).submit({ type: "input", content: "fetch" });
  await streamed.promise;
  expect(await harness.close()).toEqual({ notStopped: [] });
  return submission.id;
}

/** Reopens with a `beforeTool` hook that holds the rerun until `hookDone` opens. */
async function reopenHeld(memory: MemoryStorage) {
  const hookRunning = gate();
  const hookDone = gate();
  const executed: number[] = [];
  const harness = await Harness.open(new Survivor(memory), {
    model: model(),
    tools: [fetchTool((attempt) => (executed.push(attempt), []))],
    settings,
    hooks: {
      beforeTool: async () => {
        hookRunning.open();
        await hookDone.promise;
        return undefined;
      },
    },
  });
  await harness.resume(); // the crashed call reruns
  return { harness, hookRunning, hookDone, executed };
}

describe("a safe tool rerun after a crash keeps the crashed attempt's output until it writes its own", () => {
  it("a rerun aborted before execute is called reports the crashed attempt's output (with its cut), not 'No output was recorded'", async () => {
    const memory = new MemoryStorage();
    await crashMidCall(memory);
    const { harness, hookRunning, hookDone, executed } = await reopenHeld(memory);
    try {
      await hookRunning.promise;
      // Attempt 2 is running its hook: the slot still shows attempt 1, whose output it holds.
      expect(await slotOf(harness)).toMatchObject({
        status: "running",
        attempt: 1,
        ...crashedOutput,
      });
      const root = await harness.root();
      expect(await root.abort()).toBe(1);
      hookDone.open();
      await harness.whenIdle();
      expect(executed).toEqual([]);
      const entries = await root.entries();
      expect(toolResults(entries)).toEqual([abortedWithCrashedOutput]);
      // What the model is sent with the next input.
      expect(deriveContext(entries).filter((m) => m.role === "toolResult")).toEqual([
        abortedWithCrashedOutput.message,
      ]);
    } finally {
      hookDone.open(); // when an assertion failed first
      await harness.close();
    }
  });

  it("a rerun withdrawn by a close before execute leaves the slot as it was: pending, attempt 1, the crashed attempt's output and cut", async () => {
    const memory = new MemoryStorage();
    await crashMidCall(memory);
    const held = await reopenHeld(memory);
    await held.hookRunning.promise;
    const closing = held.harness.close();
    held.hookDone.open();
    expect(await closing).toEqual({ notStopped: [] });
    expect(held.executed).toEqual([]);

    const reopened = await Harness.open(new Survivor(memory), {
      model: model(),
      tools: [fetchTool(() => [])],
      settings,
    });
    try {
      // Before the scheduler starts: the call is back where the crash left it.
      const [task] = (await reopened.session.read.scanTasks({ kind: TOOL_TASK }, 10)).items;
      expect(task?.state).toEqual({
        status: "pending",
        checkpoint: { phase: "running", attempt: 1 },
      });
      expect(await slotOf(reopened)).toEqual({
        taskId: task?.id,
        toolCallId: "call_1_1",
        toolName: "fetch",
        status: "pending",
        attempt: 1,
        ...crashedOutput,
      });
    } finally {
      await reopened.close();
    }
  });

  it("a crash right after the rerun's intent commit loses no output: the next rerun, aborted before execute, still reports it", async () => {
    const memory = new MemoryStorage();
    await crashMidCall(memory);
    // The rerun stops in a hook that ignores the close: close gives up on it and leaves it as stored.
    const hookRunning = gate();
    const stuck = await Harness.open(new Survivor(memory), {
      model: model(),
      tools: [fetchTool(() => [])],
      settings: { ...settings, stopGraceMs: 20 },
      hooks: {
        beforeTool: () => {
          hookRunning.open();
          return new Promise<never>(() => undefined);
        },
      },
      onError: () => undefined,
    });
    await stuck.resume();
    await hookRunning.promise;
    const [task] = (await stuck.session.read.scanTasks({ kind: TOOL_TASK }, 10)).items;
    expect((await stuck.close()).notStopped).toEqual([task?.id]);

    const { harness, hookRunning: running, hookDone, executed } = await reopenHeld(memory);
    try {
      await running.promise;
      // Attempt 3 is running its hook: the slot still shows attempt 1, whose output it holds.
      expect(await slotOf(harness)).toMatchObject({
        status: "running",
        attempt: 1,
        ...crashedOutput,
      });
      const root = await harness.root();
      expect(await root.abort()).toBe(1);
      hookDone.open();
      await harness.whenIdle();
      expect(executed).toEqual([]);
      expect(toolResults(await root.entries())).toEqual([abortedWithCrashedOutput]);
    } finally {
      hookDone.open(); // when an assertion failed first
      await harness.close();
    }
  });

  it("the rerun's first output replaces the crashed attempt's output, cut and attempt number; a stream shows each attempt's output once", async () => {
    const memory = new MemoryStorage();
    const submissionId = await crashMidCall(memory);
    const streamed = gate();
    const done = gate();
    const harness = await Harness.open(new Survivor(memory), {
      model: model(),
      tools: [fetchTool(() => ["again 1\n", "again 2\n"], streamed.open, done.promise)],
      settings,
    });
    try {
      const root = await harness.root();
      const shown = gate();
      const events: ConversationEvent[] = [];
      const following = (async () => {
        for await (const event of root.stream({ until: submissionId })) {
          events.push(event);
          if (event.type === "toolOutput") shown.open();
        }
      })();
      await shown.promise; // the stream has shown the crashed attempt's output: now the rerun runs
      await harness.resume();
      await streamed.promise;
      const slot = await slotOf(harness);
      expect(slot).toMatchObject({ status: "running", attempt: 2, output: "again 1\nagain 2\n" });
      expect(slot?.outputCut).toBeUndefined();
      done.open();
      await following;
      const output = events
        .filter((e) => e.type === "toolOutput")
        .map((e) => (e as { delta: string }).delta)
        .join("");
      expect(output).toBe("page 2\npage 3\nagain 1\nagain 2\n");
      expect(toolResults(await root.entries())).toEqual([
        {
          message: {
            role: "toolResult",
            toolCallId: "call_1_1",
            toolName: "fetch",
            content: "fetched",
            isError: false,
          },
          data: { toolCallId: "call_1_1", attempt: 2 },
        },
      ]);
    } finally {
      await harness.close();
    }
  });
});
