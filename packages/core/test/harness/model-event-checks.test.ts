import { describe, expect, it } from "vitest";
import {
  defineTool,
  Harness,
  type Model,
  type ModelEvent,
  type ModelRequest,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";

const usage = { inputTokens: 1, outputTokens: 1 };
const done = { type: "done", stopReason: "stop", usage };
const toolUse = { type: "done", stopReason: "toolUse", usage };

/**
 * A model whose first call yields `events` as they are (malformed ones
 * included: the port is called with whatever a buggy adapter sends); any
 * later call answers "final". A compaction request gets `summary`.
 */
class RawModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(
    private readonly events: readonly unknown[],
    private readonly summary: readonly unknown[] = [{ type: "text", delta: "summary" }, done],
  ) {}

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    this.requests.push(request);
    const answers = this.requests.filter((r) => r.purpose === undefined).length;
    const events =
      request.purpose === "compaction"
        ? this.summary
        : answers === 1
          ? this.events
          : [{ type: "text", delta: "final" }, done];
    for (const event of events) {
      await Promise.resolve(); // a real port streams asynchronously
      yield event as ModelEvent;
    }
  }
}

const echo = defineTool({
  name: "t",
  description: "Echoes",
  parameters: { type: "object" },
  replay: "safe",
  execute: () => ({ content: "R" }),
});

const malformed = (problem: string): string => `the model sent a malformed event: ${problem}`;

describe("model port > a malformed event ends the call as a model failure, stored nowhere", () => {
  it.each<[string, unknown[], string]>([
    [
      "a toolCall without an id",
      [{ type: "toolCall", name: "t", arguments: {} }, toolUse],
      "toolCall.id: must be a non-empty string, got undefined",
    ],
    [
      "a toolCall whose id is a number",
      [{ type: "toolCall", id: 7, name: "t", arguments: {} }, toolUse],
      "toolCall.id: must be a non-empty string, got 7",
    ],
    [
      "two toolCalls with the same id",
      [
        { type: "toolCall", id: "dup", name: "t", arguments: {} },
        { type: "toolCall", id: "dup", name: "t", arguments: {} },
        toolUse,
      ],
      'toolCall.id: "dup" is the id of an earlier tool call of this answer (each call needs its own id)',
    ],
    [
      "a toolCall without a name",
      [{ type: "toolCall", id: "a", arguments: {} }, toolUse],
      "toolCall.name: must be a non-empty string, got undefined",
    ],
    [
      "a toolCall whose arguments are a JSON string",
      [{ type: "toolCall", id: "a", name: "t", arguments: "{}" }, toolUse],
      'toolCall.arguments: must be a JSON object, got "{}" (a string)',
    ],
    [
      "a toolCall whose arguments are not JSON",
      [{ type: "toolCall", id: "a", name: "t", arguments: { n: Number.NaN } }, toolUse],
      "toolCall.arguments.n: NaN is not JSON",
    ],
    [
      "a text delta that is not a string",
      [{ type: "text", delta: 42 }, done],
      "text.delta: must be a string, got 42",
    ],
    [
      "a text event with a misspelt field",
      [{ type: "text", text: "hi" }, done],
      "text.text: not a field of a text event (delta)",
    ],
    [
      "a reasoning delta that is not a string",
      [{ type: "reasoning" }, done],
      "reasoning.delta: must be a string, got undefined",
    ],
    [
      "a done with an unknown stopReason",
      [{ type: "done", stopReason: "finished", usage }],
      'done.stopReason: "finished" (a string) is not a stop reason (stop, toolUse, length, error, aborted)',
    ],
    [
      "a done without usage",
      [{ type: "done", stopReason: "stop" }],
      "done.usage: must be { inputTokens, outputTokens, cachedInputTokens?, reasoningTokens? }, got undefined",
    ],
    [
      "a done whose usage is NaN",
      [{ type: "done", stopReason: "stop", usage: { inputTokens: Number.NaN, outputTokens: 1 } }],
      "done.usage.inputTokens: must be a non-negative number of tokens, got NaN",
    ],
    [
      "a done whose usage has an unknown field",
      [{ type: "done", stopReason: "stop", usage: { ...usage, cacheTokens: 3 } }],
      "done.usage.cacheTokens: not a usage field (inputTokens, outputTokens, cachedInputTokens, reasoningTokens)",
    ],
    [
      "an error event without a message",
      [{ type: "error" }],
      "error.message: must be a string, got undefined",
    ],
    [
      "an error event with an unknown kind",
      [{ type: "error", message: "boom", kind: "fatal", retryable: true }],
      'error.kind: "fatal" (a string) is not an error kind (overflow, auth, invalid, transient); its message was "boom"',
    ],
    [
      "an event of unknown type",
      [{ type: "banana" }, { type: "text", delta: "hi" }, done],
      'type: "banana" (a string) is not an event type (text, reasoning, toolCall, done, error)',
    ],
    ["something that is not an event", [null], "the stream yielded null, not an event object"],
  ])("%s", async (_label, events, problem) => {
    const model = new RawModel(events);
    const errors: unknown[] = [];
    const harness = await Harness.open(new MemoryStorage(), {
      model,
      tools: [echo],
      onError: (error) => errors.push(error),
    });
    try {
      const root = await harness.root();
      const settled = await (await root.submit({ type: "input", content: "q" })).wait();
      expect(settled).toMatchObject({ status: "unanswered", reason: "model-error" });
      expect(settled.detail).toEqual({
        name: "ModelError",
        message: malformed(problem),
        code: "MALFORMED_EVENT",
        kind: "invalid",
        retryable: false,
        attempts: 1,
      });
      // Not retried, nothing of the answer stored: no assistant entry, no tool task, no usage.
      expect(model.requests).toHaveLength(1);
      expect((await root.entries()).map((e) => e.kind)).toEqual(["durably.user"]);
      const tasks = await harness.session.read.scanTasks({ kind: "durably.tool" }, 10);
      expect(tasks.items).toEqual([]);
      expect((await harness.usage()).total.requests).toBe(0);
      const view = await root.view();
      expect(view.live).toMatchObject({ run: null, generation: null, tools: {} });
      expect(errors).toEqual([]);
    } finally {
      await harness.close();
    }
  });

  it("what streamed well before the malformed event is kept as a failed turn (text only, like any model failure)", async () => {
    const model = new RawModel([
      { type: "text", delta: "partial" },
      { type: "toolCall", id: "a", name: "t", arguments: {} },
      { type: "toolCall", id: "a", name: "t", arguments: {} },
      toolUse,
    ]);
    const harness = await Harness.open(new MemoryStorage(), { model, tools: [echo] });
    try {
      const root = await harness.root();
      const settled = await (await root.submit({ type: "input", content: "q" })).wait();
      expect((settled.detail as { message: string }).message).toBe(
        malformed(
          'toolCall.id: "a" is the id of an earlier tool call of this answer (each call needs its own id)',
        ),
      );
      const entries = await root.entries();
      expect(entries.map((e) => e.kind)).toEqual(["durably.user", "durably.assistant"]);
      expect(entries[1]?.model?.[0]).toEqual({
        role: "assistant",
        content: [{ type: "text", text: "partial" }],
        stopReason: "error",
      });
    } finally {
      await harness.close();
    }
  });

  it("well-formed events with their optional fields (or those fields undefined) are accepted", async () => {
    const model = new RawModel([
      { type: "reasoning", delta: "thinking", id: undefined, providerMetadata: { p: { s: "x" } } },
      { type: "text", delta: "" },
      { type: "text", delta: "calling" },
      { type: "toolCall", id: "a", name: "t", arguments: {}, providerMetadata: { p: { k: 1 } } },
      { type: "toolCall", id: "b", name: "t", arguments: { x: [1, "y", null] } },
      {
        type: "done",
        stopReason: "toolUse",
        usage: {
          inputTokens: 3,
          outputTokens: 2,
          cachedInputTokens: 1,
          reasoningTokens: undefined,
        },
      },
    ]);
    const harness = await Harness.open(new MemoryStorage(), { model, tools: [echo] });
    try {
      const root = await harness.root();
      const settled = await (await root.submit({ type: "input", content: "q" })).wait();
      expect(settled.status).toBe("done");
      expect((await root.entries()).map((e) => e.kind)).toEqual([
        "durably.user",
        "durably.assistant",
        "durably.tool-result",
        "durably.tool-result",
        "durably.assistant",
      ]);
    } finally {
      await harness.close();
    }
  });

  it("a well-formed retryable error event (an optional field undefined) is still retried", async () => {
    let calls = 0;
    const model: Model = {
      async *stream() {
        calls += 1;
        await Promise.resolve();
        const events: unknown[] =
          calls === 1
            ? [{ type: "error", message: "busy", retryable: true, code: undefined }]
            : [{ type: "text", delta: "ok" }, done];
        for (const event of events) yield event as ModelEvent;
      },
    };
    const harness = await Harness.open(new MemoryStorage(), {
      model,
      settings: { retry: { initialDelayMs: 1, maxDelayMs: 2 } },
    });
    try {
      const root = await harness.root();
      expect(await (await root.submit({ type: "input", content: "q" })).answerText()).toBe("ok");
      expect(calls).toBe(2);
    } finally {
      await harness.close();
    }
  });

  it("an error event with an empty message keeps its retry hint: retried, and a final one says it had no message", async () => {
    // An HTTP/2 error without a body has no status text: providers report it with message "".
    let calls = 0;
    const model: Model = {
      async *stream() {
        calls += 1;
        await Promise.resolve();
        yield { type: "error", message: "", code: "HTTP_503", kind: "transient", retryable: true };
      },
    };
    const harness = await Harness.open(new MemoryStorage(), {
      model,
      settings: { retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 2 } },
    });
    try {
      const root = await harness.root();
      const settled = await (await root.submit({ type: "input", content: "q" })).wait();
      expect(calls).toBe(2); // retried, not ended as a malformed event
      expect(settled).toMatchObject({ status: "unanswered", reason: "model-error" });
      expect(JSON.stringify(settled)).toContain("the model reported an error without a message");
      expect(JSON.stringify(settled)).toContain("HTTP_503");
      expect(JSON.stringify(settled)).not.toContain("MALFORMED_EVENT");
    } finally {
      await harness.close();
    }
  });

  it("a malformed event in a compaction's summary call fails the compaction with the reason", async () => {
    const model = new RawModel(
      [{ type: "text", delta: "one" }, done],
      [{ type: "text", delta: 5 }, done],
    );
    const harness = await Harness.open(new MemoryStorage(), {
      model,
      settings: { compaction: { auto: false } },
    });
    try {
      const root = await harness.root();
      for (const q of ["q1", "q2", "q3"])
        await (await root.submit({ type: "input", content: q })).wait();
      const result = await root.compact({ keepLastTurns: 1 });
      expect(result).toMatchObject({
        status: "failed",
        error: {
          message: `the summary call failed: ${malformed("text.delta: must be a string, got 5")}`,
          code: "MALFORMED_EVENT",
        },
      });
      expect((await root.entries()).some((e) => e.kind === "durably.compaction")).toBe(false);
    } finally {
      await harness.close();
    }
  });
});
