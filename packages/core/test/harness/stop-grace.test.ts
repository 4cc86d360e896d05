import { describe, expect, it } from "vitest";
import {
  defineTool,
  Harness,
  ScriptedModel,
  TOOL_TASK,
  type Model,
  type ModelEvent,
  type TaskId,
} from "../../src/index.js";
import { Survivor } from "../support/faulty-storage.js";
import { MemoryStorage } from "../support/memory.js";

/** Rejects naming `what` when `promise` does not settle within `ms`: a hang fails the test instead. */
function within<T>(promise: Promise<T>, what: string, ms = 2_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A tool that never returns and never looks at its signal. */
function deafTool() {
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const tool = defineTool({
    name: "deaf",
    description: "never returns",
    parameters: { type: "object" },
    replay: "unsafe",
    execute: () => {
      started();
      return new Promise<never>(() => undefined);
    },
  });
  return { tool, running };
}

const callsDeaf = () =>
  new ScriptedModel([
    { toolCalls: [{ name: "deaf", arguments: {} }] },
    { text: "after the tool" },
    { text: "next answer" },
  ]);

/** A model whose stream never yields and never looks at its signal. */
const deafModel: Model = {
  stream: () => ({
    [Symbol.asyncIterator]: () => ({
      next: () => new Promise<IteratorResult<ModelEvent>>(() => undefined),
    }),
  }),
};

const quiet = { onError: () => undefined };

describe("Harness: tools and models that ignore their abort signal", () => {
  it("close() goes on after settings.stopGraceMs, names the stuck tool task in notStopped, and the next open gives the unsafe tool an interrupted result and answers", async () => {
    const memory = new MemoryStorage();
    const deaf = deafTool();
    const harness = await Harness.open(new Survivor(memory), {
      model: callsDeaf(),
      tools: [deaf.tool],
      settings: { stopGraceMs: 50 },
      ...quiet,
    });
    const root = await harness.root();
    const submission = await root.submit({ type: "input", content: "go" });
    await deaf.running;
    const tasks = await harness.session.read.scanTasks({ kind: TOOL_TASK }, 10);
    const toolTask = tasks.items[0]?.id as TaskId;
    const report = await within(harness.close(), "harness.close()");
    expect(report.notStopped).toEqual([toolTask]);
    const reopened = await Harness.open(new Survivor(memory), {
      model: callsDeaf(), // turn 2 answers after the tool's result
      tools: [deaf.tool],
    });
    await within(reopened.whenIdle(), "the reopened harness goes idle");
    const tool = await reopened.session.read.task(toolTask);
    expect(tool?.state).toMatchObject({
      status: "terminal",
      outcome: { kind: "completed", value: { interrupted: true } },
    });
    const record = await reopened.session.read.submission(submission.id);
    expect(record, JSON.stringify(record)).toMatchObject({ status: "done" });
    await reopened.close();
  });

  it("aborting a conversation whose tool ignores its signal settles the submission aborted after stopGraceMs, and the next input is answered", async () => {
    const deaf = deafTool();
    const harness = await Harness.open(new MemoryStorage(), {
      model: callsDeaf(),
      tools: [deaf.tool],
      settings: { stopGraceMs: 50 },
      ...quiet,
    });
    const root = await harness.root();
    const submission = await root.submit({ type: "input", content: "go" });
    await deaf.running;
    await root.abort();
    expect(await within(submission.wait(), "the aborted submission")).toMatchObject({
      status: "unanswered",
      reason: "aborted",
    });
    const next = await root.submit({ type: "input", content: "next" });
    expect(await within(next.wait(), "the next input")).toMatchObject({ status: "done" });
    expect(await within(harness.close(), "harness.close()")).toEqual({ notStopped: [] });
  });

  it("aborting a conversation whose model stream ignores its signal settles the submission aborted after stopGraceMs; close reports nothing stuck", async () => {
    const harness = await Harness.open(new MemoryStorage(), {
      model: deafModel,
      settings: { stopGraceMs: 50 },
      ...quiet,
    });
    const root = await harness.root();
    const submission = await root.submit({ type: "input", content: "go" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await root.abort();
    expect(await within(submission.wait(), "the aborted submission")).toMatchObject({
      status: "unanswered",
      reason: "aborted",
    });
    expect(await within(harness.close(), "harness.close()")).toEqual({ notStopped: [] });
  });

  it("a tool that submits to its own conversation and waits for the answer holds its run (the answer comes after the run); aborting the outer submission ends the run after stopGraceMs and the inner submission is then answered", async () => {
    let inner: Promise<string> | undefined;
    let asked!: () => void;
    const askedPromise = new Promise<void>((resolve) => (asked = resolve));
    const asker = defineTool({
      name: "asker",
      description: "asks its own conversation and waits",
      parameters: { type: "object" },
      replay: "unsafe",
      execute: async () => {
        const sub = await (await harness.root()).submit({ type: "input", content: "inner" });
        inner = sub.wait().then((record) => record.status);
        asked();
        return { content: `inner ${await inner}` };
      },
    });
    const harness = await Harness.open(new MemoryStorage(), {
      model: new ScriptedModel([
        { toolCalls: [{ name: "asker", arguments: {} }] },
        { text: "inner answered" },
      ]),
      tools: [asker],
      settings: { stopGraceMs: 50 },
      ...quiet,
    });
    const root = await harness.root();
    const outer = await root.submit({ type: "input", content: "go" });
    await askedPromise;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await outer.status()).status).toBe("placed"); // held by its own tool
    await outer.abort(); // conversation.abort() would withdraw the queued inner submission too
    expect(await within(outer.wait(), "the aborted outer submission")).toMatchObject({
      status: "unanswered",
      reason: "aborted",
    });
    expect(await within(inner as Promise<string>, "the inner submission")).toBe("done");
    expect(await within(harness.close(), "harness.close()")).toEqual({ notStopped: [] });
  });
});
