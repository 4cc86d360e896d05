import {
  LoadAPIKeyError,
  type LanguageModelV3StreamPart,
  type LanguageModelV3Usage,
} from "@ai-sdk/provider";
import { ROOT_CONVERSATION_ID, type ModelEvent, type ModelRequest } from "@durably/core";
import { simulateReadableStream } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { aiSdkModel } from "../src/index.js";

const usage = (input: number, output: number, extra: Partial<LanguageModelV3Usage> = {}) => ({
  inputTokens: { total: input, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: undefined, reasoning: undefined },
  ...extra,
});

const finish = (
  unified: "stop" | "length" | "tool-calls" | "content-filter" | "error" | "other" = "stop",
  u: LanguageModelV3Usage = usage(3, 2),
): LanguageModelV3StreamPart => ({
  type: "finish",
  finishReason: { unified, raw: unified },
  usage: u,
});

function mock(parts: LanguageModelV3StreamPart[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: () => Promise.resolve({ stream: convertArrayToReadableStream(parts) }),
  });
}

const request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  conversationId: ROOT_CONVERSATION_ID,
  ...extra,
});

/** `promise`, or a rejection once `ms` have passed without it settling. */
function within<T>(promise: Promise<T>, ms = 2_000): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_resolve, reject) =>
      setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms),
    ),
  ]);
}

async function collect(stream: AsyncIterable<ModelEvent>): Promise<ModelEvent[]> {
  const out: ModelEvent[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

describe("aiSdkModel over MockLanguageModelV3: streaming", () => {
  it("streams text deltas as they arrive, then done with stop and usage", async () => {
    const model = aiSdkModel(
      mock([
        { type: "stream-start", warnings: [] },
        { type: "response-metadata", id: "r1" },
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "Hel" },
        { type: "text-delta", id: "t", delta: "" },
        { type: "text-delta", id: "t", delta: "lo" },
        { type: "text-end", id: "t" },
        finish("stop", usage(10, 2)),
      ]),
    );
    expect(await collect(model.stream(request()))).toEqual([
      { type: "text", delta: "Hel" },
      { type: "text", delta: "lo" },
      { type: "done", stopReason: "stop", usage: { inputTokens: 10, outputTokens: 2 } },
    ]);
  });

  it("passes reasoning with its block id and provider metadata (an Anthropic signature)", async () => {
    const model = aiSdkModel(
      mock([
        { type: "reasoning-start", id: "r1" },
        { type: "reasoning-delta", id: "r1", delta: "think" },
        { type: "reasoning-end", id: "r1", providerMetadata: { anthropic: { signature: "sig" } } },
        { type: "text-delta", id: "t", delta: "ok" },
        finish(),
      ]),
    );
    expect((await collect(model.stream(request()))).slice(0, 3)).toEqual([
      { type: "reasoning", delta: "think", id: "r1" },
      {
        type: "reasoning",
        delta: "",
        id: "r1",
        providerMetadata: { anthropic: { signature: "sig" } },
      },
      { type: "text", delta: "ok" },
    ]);
  });

  it("reports cached input and reasoning tokens", async () => {
    const model = aiSdkModel(
      mock([
        finish(
          "stop",
          usage(100, 40, {
            inputTokens: { total: 100, noCache: 20, cacheRead: 80, cacheWrite: 0 },
            outputTokens: { total: 40, text: 10, reasoning: 30 },
          }),
        ),
      ]),
    );
    expect(await collect(model.stream(request()))).toEqual([
      {
        type: "done",
        stopReason: "stop",
        usage: { inputTokens: 100, outputTokens: 40, cachedInputTokens: 80, reasoningTokens: 30 },
      },
    ]);
  });

  it("counts token totals the provider does not report as 0 and leaves out unreported details", async () => {
    const done = async (u: unknown) =>
      (
        await collect(
          aiSdkModel(
            mock([
              {
                type: "finish",
                finishReason: { unified: "stop", raw: "stop" },
                usage: u,
              } as LanguageModelV3StreamPart,
            ]),
          ).stream(request()),
        )
      ).at(-1);
    const stop = (u: object) => ({ type: "done", stopReason: "stop", usage: u });
    expect(await done({})).toEqual(stop({ inputTokens: 0, outputTokens: 0 }));
    expect(await done(undefined)).toEqual(stop({ inputTokens: 0, outputTokens: 0 }));
    expect(await done({ inputTokens: { total: 7, cacheRead: null } })).toEqual(
      stop({ inputTokens: 7, outputTokens: 0 }),
    );
    expect(
      await done({
        inputTokens: { total: undefined, noCache: undefined, cacheRead: 4, cacheWrite: undefined },
        outputTokens: { total: 9, text: undefined, reasoning: undefined },
      }),
    ).toEqual(stop({ inputTokens: 0, outputTokens: 9, cachedInputTokens: 4 }));
  });

  it("emits a tool call once complete, with parsed arguments, and maps tool-calls to toolUse", async () => {
    const model = aiSdkModel(
      mock([
        { type: "tool-input-start", id: "c1", toolName: "add" },
        { type: "tool-input-delta", id: "c1", delta: '{"a":' },
        { type: "tool-input-delta", id: "c1", delta: '2,"b":3}' },
        { type: "tool-input-end", id: "c1" },
        {
          type: "tool-call",
          toolCallId: "c1",
          toolName: "add",
          input: '{"a":2,"b":3}',
          providerMetadata: { google: { thoughtSignature: "x" } },
        },
        finish("tool-calls"),
      ]),
    );
    expect(await collect(model.stream(request()))).toEqual([
      {
        type: "toolCall",
        id: "c1",
        name: "add",
        arguments: { a: 2, b: 3 },
        providerMetadata: { google: { thoughtSignature: "x" } },
      },
      { type: "done", stopReason: "toolUse", usage: { inputTokens: 3, outputTokens: 2 } },
    ]);
  });

  it("joins tool input pieces into a call when the provider sends no tool-call part", async () => {
    const model = aiSdkModel(
      mock([
        { type: "tool-input-start", id: "c1", toolName: "search" },
        { type: "tool-input-delta", id: "c1", delta: '{"q":"du' },
        { type: "tool-input-delta", id: "c1", delta: 'rable"}' },
        { type: "tool-input-end", id: "c1" },
        finish("tool-calls"),
      ]),
    );
    expect((await collect(model.stream(request())))[0]).toEqual({
      type: "toolCall",
      id: "c1",
      name: "search",
      arguments: { q: "durable" },
    });
  });

  it("takes empty tool-call arguments as {}", async () => {
    const model = aiSdkModel(
      mock([
        { type: "tool-call", toolCallId: "c", toolName: "now", input: "" },
        finish("tool-calls"),
      ]),
    );
    expect((await collect(model.stream(request())))[0]).toMatchObject({ arguments: {} });
  });

  it("skips tools the provider ran itself", async () => {
    const model = aiSdkModel(
      mock([
        {
          type: "tool-call",
          toolCallId: "ws",
          toolName: "web_search",
          input: "{}",
          providerExecuted: true,
        },
        { type: "text-delta", id: "t", delta: "found it" },
        finish(),
      ]),
    );
    expect((await collect(model.stream(request()))).map((e) => e.type)).toEqual(["text", "done"]);
  });

  it("maps finish reasons: length, other as stop, content-filter and error as errors", async () => {
    const end = async (reason: Parameters<typeof finish>[0]) =>
      (await collect(aiSdkModel(mock([finish(reason)])).stream(request()))).at(-1);
    expect(await end("length")).toMatchObject({ type: "done", stopReason: "length" });
    expect(await end("other")).toMatchObject({ type: "done", stopReason: "stop" });
    expect(await end("content-filter")).toMatchObject({
      type: "error",
      code: "CONTENT_FILTER",
      kind: "invalid",
      retryable: false,
    });
    expect(await end("error")).toMatchObject({
      type: "error",
      code: "FINISH_ERROR",
      retryable: false,
    });
  });
});

describe("aiSdkModel over MockLanguageModelV3: bad input from the provider", () => {
  it("turns malformed tool-call JSON into a non-retryable error naming the call", async () => {
    const model = aiSdkModel(
      mock([
        { type: "text-delta", id: "t", delta: "calling" },
        { type: "tool-call", toolCallId: "c9", toolName: "add", input: '{"a": 2,' },
        finish("tool-calls"),
      ]),
    );
    const events = await collect(model.stream(request()));
    expect(events.map((e) => e.type)).toEqual(["text", "error"]);
    const error = events[1] as Extract<ModelEvent, { type: "error" }>;
    expect(error).toMatchObject({ code: "INVALID_TOOL_CALL", kind: "invalid", retryable: false });
    expect(error.message).toMatch(/called "add" \(call c9\).*not valid JSON.*"\{\\"a\\": 2,"/);
  });

  it("refuses tool-call arguments that are JSON but not an object", async () => {
    const model = aiSdkModel(
      mock([{ type: "tool-call", toolCallId: "c", toolName: "f", input: "[1,2]" }, finish()]),
    );
    expect((await collect(model.stream(request())))[0]).toMatchObject({
      type: "error",
      message: expect.stringMatching(/they are an array, not a JSON object/) as string,
    });
  });

  it("says so when the stream ends without a finish event", async () => {
    const model = aiSdkModel(mock([{ type: "text-delta", id: "t", delta: "half an ans" }]));
    const events = await collect(model.stream(request()));
    expect(events.at(-1)).toMatchObject({
      type: "error",
      code: "NO_FINISH",
      kind: "invalid",
      retryable: false,
    });
  });

  it("turns a provider that throws synchronously into an error event", async () => {
    const model = aiSdkModel(
      new MockLanguageModelV3({
        doStream: () => {
          throw new Error("provider exploded");
        },
      }),
    );
    expect(await collect(model.stream(request()))).toEqual([
      { type: "error", message: "provider exploded", retryable: false },
    ]);
  });

  it("turns a missing API key into an auth error", async () => {
    const model = aiSdkModel(
      new MockLanguageModelV3({
        doStream: () => {
          throw new LoadAPIKeyError({ message: "OpenAI API key is missing." });
        },
      }),
    );
    expect((await collect(model.stream(request())))[0]).toMatchObject({
      type: "error",
      kind: "auth",
      code: "API_KEY_MISSING",
      retryable: false,
    });
  });

  it("turns an error part into an error event and stops reading", async () => {
    let pulled = 0;
    const parts: LanguageModelV3StreamPart[] = [
      { type: "text-delta", id: "t", delta: "a" },
      { type: "error", error: { message: "Overloaded", type: "overloaded_error" } },
      { type: "text-delta", id: "t", delta: "never read" },
      finish(),
    ];
    const model = aiSdkModel(
      new MockLanguageModelV3({
        doStream: () =>
          Promise.resolve({
            stream: new ReadableStream<LanguageModelV3StreamPart>({
              pull(controller) {
                const part = parts[pulled++];
                if (part) controller.enqueue(part);
                else controller.close();
              },
            }),
          }),
      }),
    );
    expect(await collect(model.stream(request()))).toEqual([
      { type: "text", delta: "a" },
      {
        type: "error",
        message: "Overloaded",
        code: "overloaded_error",
        kind: "transient",
        retryable: true,
      },
    ]);
    expect(pulled).toBeLessThan(parts.length);
  });

  it("turns a malformed part into one INVALID_STREAM_PART error naming the part and field", async () => {
    const bad = (part: unknown) => part as LanguageModelV3StreamPart;
    const cases: [string, unknown, string][] = [
      [
        "text-delta without delta",
        { type: "text-delta", id: "t" },
        '"text-delta" stream part: delta is missing, not a string',
      ],
      [
        "reasoning-delta with a number",
        { type: "reasoning-delta", id: "r", delta: 5 },
        '"reasoning-delta" stream part: delta is 5, not a string',
      ],
      [
        "tool-input-delta with null",
        { type: "tool-input-delta", id: "c", delta: null },
        '"tool-input-delta" stream part: delta is null, not a string',
      ],
      ["a null part", null, "stream part: the part is null, not an object"],
      ["a part without a type", { delta: "x" }, "stream part: type is missing, not a string"],
      [
        "NaN in reasoning metadata",
        { type: "reasoning-delta", id: "r", delta: "x", providerMetadata: { p: { score: NaN } } },
        '"reasoning-delta" stream part: providerMetadata.p.score: NaN is not JSON',
      ],
      [
        "undefined in a tool call's metadata array",
        {
          type: "tool-call",
          toolCallId: "c",
          toolName: "f",
          input: "{}",
          providerMetadata: { p: { a: [undefined] } },
        },
        '"tool-call" stream part: providerMetadata.p.a[0]: undefined is not JSON',
      ],
      [
        "a tool call without input",
        { type: "tool-call", toolCallId: "c", toolName: "f" },
        '"tool-call" stream part: input is missing, not a string',
      ],
      [
        "finish without a finish reason",
        { type: "finish", usage: usage(1, 1) },
        '"finish" stream part: finishReason is missing, not an object',
      ],
      [
        "finish with a token count as text",
        {
          type: "finish",
          finishReason: { unified: "stop", raw: "stop" },
          usage: { inputTokens: { total: "5" }, outputTokens: { total: 1 } },
        },
        '"finish" stream part: usage.inputTokens.total is "5", not a non-negative number',
      ],
    ];
    for (const [label, part, message] of cases) {
      const model = aiSdkModel(
        mock([
          { type: "text-delta", id: "t", delta: "a" },
          bad(part),
          { type: "text-delta", id: "t", delta: "ok" },
          finish(),
        ]),
      );
      expect(await collect(model.stream(request())), label).toEqual([
        { type: "text", delta: "a" },
        {
          type: "error",
          message: `the provider sent a malformed ${message}`,
          code: "INVALID_STREAM_PART",
          kind: "invalid",
          retryable: false,
        },
      ]);
    }
  });

  it("reports a malformed finish part rather than the tool calls pending before it", async () => {
    const model = aiSdkModel(
      mock([
        { type: "tool-input-start", id: "c1", toolName: "add" },
        { type: "tool-input-delta", id: "c1", delta: '{"a":1}' },
        {
          type: "finish",
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage: { inputTokens: { total: -1 }, outputTokens: { total: 1 } },
        } as unknown as LanguageModelV3StreamPart,
      ]),
    );
    expect(await collect(model.stream(request()))).toEqual([
      {
        type: "error",
        message:
          'the provider sent a malformed "finish" stream part: usage.inputTokens.total is -1, not a non-negative number',
        code: "INVALID_STREAM_PART",
        kind: "invalid",
        retryable: false,
      },
    ]);
  });

  it("refuses an unknown setting instead of dropping it", async () => {
    const provider = mock([finish()]);
    const model = aiSdkModel(provider);
    const events = await collect(model.stream(request({ settings: { temprature: 0.2 } })));
    expect(events).toEqual([
      {
        type: "error",
        message: expect.stringMatching(/settings\.temprature: not a setting/) as string,
        code: "INVALID_SETTINGS",
        kind: "invalid",
        retryable: false,
      },
    ]);
    expect(provider.doStreamCalls).toHaveLength(0);
  });

  it("refuses a model of another specification version", () => {
    expect(() =>
      aiSdkModel({ specificationVersion: "v2", provider: "old", modelId: "m" } as never),
    ).toThrow(/implements specification "v2", not "v3"/);
  });
});

describe("aiSdkModel over MockLanguageModelV3: abort", () => {
  it("rejects with the signal's reason mid-stream, even when the provider ignores the signal", async () => {
    const model = aiSdkModel(
      new MockLanguageModelV3({
        doStream: () =>
          Promise.resolve({
            stream: simulateReadableStream<LanguageModelV3StreamPart>({
              chunks: Array.from({ length: 1000 }, (_, i) => ({
                type: "text-delta" as const,
                id: "t",
                delta: `w${i} `,
              })),
              chunkDelayInMs: 5,
            }),
          }),
      }),
    );
    const controller = new AbortController();
    const reason = new Error("the conversation was aborted");
    const seen: string[] = [];
    const run = (async () => {
      for await (const event of model.stream(request(), { signal: controller.signal })) {
        if (event.type === "text") seen.push(event.delta);
        if (seen.length === 3) controller.abort(reason);
      }
    })();
    await expect(run).rejects.toBe(reason);
    expect(seen).toHaveLength(3);
  });

  it("rejects with the reason while doStream is still pending", async () => {
    const model = aiSdkModel(
      new MockLanguageModelV3({ doStream: () => new Promise(() => undefined) }),
    );
    const controller = new AbortController();
    const run = collect(model.stream(request(), { signal: controller.signal }));
    setTimeout(() => controller.abort(new Error("stop")), 10);
    await expect(run).rejects.toThrow("stop");
  });

  it("cancels the stream of a doStream that resolves after the abort", async () => {
    let pulls = 0;
    let cancelled: (reason: unknown) => void = () => undefined;
    const cancelledWith = new Promise<unknown>((resolve) => (cancelled = resolve));
    const controller = new AbortController();
    const reason = new Error("the conversation was aborted");
    const model = aiSdkModel(
      new MockLanguageModelV3({
        // A provider that ignores the signal: it resolves 30 ms after the abort, stream and all.
        doStream: () =>
          new Promise((resolve) =>
            controller.signal.addEventListener("abort", () =>
              setTimeout(
                () =>
                  resolve({
                    stream: new ReadableStream<LanguageModelV3StreamPart>({
                      pull(c) {
                        pulls++;
                        c.enqueue({ type: "text-delta", id: "t", delta: "never read" });
                      },
                      cancel: cancelled,
                    }),
                  }),
                30,
              ),
            ),
          ),
      }),
    );
    const run = collect(model.stream(request(), { signal: controller.signal }));
    setTimeout(() => controller.abort(reason), 10);
    await expect(run).rejects.toBe(reason);
    expect(await within(cancelledWith)).toBe(reason);
    expect(pulls).toBeLessThanOrEqual(1); // the stream's own start-up pull, never a read
  });

  it("observes a doStream that rejects after the abort: no unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (error: unknown): void => void unhandled.push(error);
    process.on("unhandledRejection", onUnhandled);
    try {
      // Aborted while doStream is pending, which then rejects 10 ms later.
      const pending = new AbortController();
      const late = aiSdkModel(
        new MockLanguageModelV3({
          doStream: () =>
            new Promise((_resolve, reject) =>
              pending.signal.addEventListener("abort", () =>
                setTimeout(() => reject(new Error("fetch aborted late")), 10),
              ),
            ),
        }),
      );
      const run = collect(late.stream(request(), { signal: pending.signal }));
      pending.abort(new Error("stop"));
      await expect(run).rejects.toThrow("stop");
      // Aborted while the call options are built, so doStream is called (and rejects) after it.
      const building = new AbortController();
      const after = aiSdkModel(
        new MockLanguageModelV3({
          doStream: () => Promise.reject(new Error("fetch aborted at once")),
        }),
        { providerOptions: () => void building.abort(new Error("stop early")) },
      );
      await expect(collect(after.stream(request(), { signal: building.signal }))).rejects.toThrow(
        "stop early",
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("cancels a late doStream's stream even when the signal aborts while the call is being made", async () => {
    let cancelled: (reason: unknown) => void = () => undefined;
    const cancelledWith = new Promise<unknown>((resolve) => (cancelled = resolve));
    const controller = new AbortController();
    const reason = new Error("aborted while building the request");
    const model = aiSdkModel(
      new MockLanguageModelV3({
        doStream: () =>
          Promise.resolve({
            stream: new ReadableStream<LanguageModelV3StreamPart>({ cancel: cancelled }),
          }),
      }),
      {
        providerOptions: () => {
          controller.abort(reason);
          return undefined;
        },
      },
    );
    await expect(collect(model.stream(request(), { signal: controller.signal }))).rejects.toBe(
      reason,
    );
    expect(await within(cancelledWith)).toBe(reason);
  });

  it("passes the signal to the provider", async () => {
    const provider = mock([finish()]);
    const controller = new AbortController();
    await collect(aiSdkModel(provider).stream(request(), { signal: controller.signal }));
    expect(provider.doStreamCalls[0]?.abortSignal).toBe(controller.signal);
  });
});
