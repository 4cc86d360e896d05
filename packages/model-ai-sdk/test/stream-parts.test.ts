import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { ROOT_CONVERSATION_ID, type ModelEvent, type ModelRequest } from "@durably/core";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { aiSdkModel } from "../src/index.js";

const request = (): ModelRequest => ({
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  conversationId: ROOT_CONVERSATION_ID,
});

/** What the adapter makes of `parts` (cast: these tests send what providers send, not the type). */
async function events(parts: unknown[]): Promise<ModelEvent[]> {
  const model = aiSdkModel(
    new MockLanguageModelV3({
      doStream: () =>
        Promise.resolve({
          stream: convertArrayToReadableStream(parts as LanguageModelV3StreamPart[]),
        }),
    }),
  );
  const out: ModelEvent[] = [];
  for await (const event of model.stream(request())) out.push(event);
  return out;
}

describe("aiSdkModel: error parts inside the stream, judged by their code", () => {
  const last = async (error: unknown) =>
    (
      await events([
        { type: "text-delta", id: "t", delta: "partial" },
        { type: "error", error },
      ])
    ).at(-1);

  it("treats server failures and rate limits as retryable, whether the code is a word or a status", async () => {
    const cases: [string, object, string][] = [
      [
        "Anthropic api_error (its 500)",
        { type: "api_error", message: "Internal server error" },
        "api_error",
      ],
      [
        "Anthropic overloaded_error",
        { type: "overloaded_error", message: "Overloaded" },
        "overloaded_error",
      ],
      [
        "vLLM engine failure",
        { message: "Internal server error", type: "InternalServerError", param: null, code: 500 },
        "InternalServerError",
      ],
      [
        "vLLM / LiteLLM 503",
        { message: "Service temporarily unavailable", type: "ServiceUnavailableError", code: 503 },
        "ServiceUnavailableError",
      ],
      [
        "internal_server_error",
        { error: { message: "boom", code: "internal_server_error" } },
        "internal_server_error",
      ],
      ["a gateway's numeric 429", { message: "Rate limit exceeded", code: 429 }, "HTTP_429"],
      ["a gateway's numeric 502", { message: "Upstream provider error", code: 502 }, "HTTP_502"],
      ["a status as a string", { message: "Request timed out", status: "408" }, "HTTP_408"],
      ["a code as a numeric string", { message: "Bad gateway", code: "502" }, "HTTP_502"],
    ];
    for (const [label, error, code] of cases)
      expect(await last(error), label).toEqual({
        type: "error",
        message: expect.any(String) as string,
        code,
        kind: "transient",
        retryable: true,
      });
  });

  it("does not retry an exhausted quota, a refusal or an unknown code", async () => {
    expect(
      await last({
        error: {
          message: "You exceeded your current quota",
          type: "insufficient_quota",
          code: "insufficient_quota",
        },
      }),
    ).toEqual({
      type: "error",
      message: "You exceeded your current quota",
      code: "insufficient_quota",
      kind: "invalid",
      retryable: false,
    });
    // A quota error that also carries the 429 status is still not retryable.
    expect(await last({ message: "quota", type: "insufficient_quota", code: 429 })).toMatchObject({
      code: "insufficient_quota",
      kind: "invalid",
      retryable: false,
    });
    // A 4xx status says more than the word: Ollama calls every error api_error.
    expect(await last({ message: "bad input", type: "api_error", code: 400 })).toMatchObject({
      code: "api_error",
      kind: "invalid",
      retryable: false,
    });
    expect(await last({ message: "bad request", code: 400 })).toEqual({
      type: "error",
      message: "bad request",
      code: "HTTP_400",
      kind: "invalid",
      retryable: false,
    });
    expect(await last({ message: "who knows", code: "mystery" })).toEqual({
      type: "error",
      message: "who knows",
      code: "mystery",
      retryable: false,
    });
  });
});

describe("aiSdkModel: a finish part of specification v2 (bare-string reason, flat usage)", () => {
  const finish = (usage: unknown) => ({ type: "finish", finishReason: "stop", usage });

  it("reads flat token counts like the object form's totals", async () => {
    expect(
      (await events([finish({ inputTokens: 12, outputTokens: 3, totalTokens: 15 })])).at(-1),
    ).toEqual({
      type: "done",
      stopReason: "stop",
      usage: { inputTokens: 12, outputTokens: 3 },
    });
    expect(
      (
        await events([
          finish({
            inputTokens: 100,
            outputTokens: 40,
            totalTokens: 140,
            cachedInputTokens: 80,
            reasoningTokens: 30,
          }),
        ])
      ).at(-1),
    ).toEqual({
      type: "done",
      stopReason: "stop",
      usage: { inputTokens: 100, outputTokens: 40, cachedInputTokens: 80, reasoningTokens: 30 },
    });
    expect((await events([finish({ inputTokens: 5, outputTokens: undefined })])).at(-1)).toEqual({
      type: "done",
      stopReason: "stop",
      usage: { inputTokens: 5, outputTokens: 0 },
    });
  });

  it("still refuses a flat count that is not a non-negative number", async () => {
    for (const [usage, why] of [
      [{ inputTokens: -1, outputTokens: 3 }, "usage.inputTokens is -1, not a non-negative number"],
      [
        { inputTokens: 1, outputTokens: NaN },
        "usage.outputTokens is NaN, not a non-negative number",
      ],
      [
        { inputTokens: 1, outputTokens: 3, cachedInputTokens: "2" },
        'usage.cachedInputTokens is "2", not a non-negative number',
      ],
      [{ inputTokens: "12", outputTokens: 3 }, 'usage.inputTokens is "12", not an object'],
    ] as const)
      expect(await events([finish(usage)]), why).toEqual([
        {
          type: "error",
          message: `the provider sent a malformed "finish" stream part: ${why}`,
          code: "INVALID_STREAM_PART",
          kind: "invalid",
          retryable: false,
        },
      ]);
  });
});
