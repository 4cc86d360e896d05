import { APICallError } from "@ai-sdk/provider";
import { ROOT_CONVERSATION_ID, type ModelEvent, type ModelRequest } from "@durably/core";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { aiSdkModel } from "../src/index.js";

const request = (): ModelRequest => ({
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  conversationId: ROOT_CONVERSATION_ID,
});

async function collect(stream: AsyncIterable<ModelEvent>): Promise<ModelEvent[]> {
  const out: ModelEvent[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

describe("aiSdkModel: provider errors, classified for the harness's retry", () => {
  const apiError = (
    statusCode: number | undefined,
    extra: Partial<ConstructorParameters<typeof APICallError>[0]> = {},
  ) =>
    new APICallError({
      message: `status ${statusCode}`,
      url: "https://api.example.com/v1/chat/completions?key=secret",
      requestBodyValues: { messages: [] },
      ...(statusCode !== undefined ? { statusCode } : {}),
      ...extra,
    });
  const first = async (error: Error, clock?: () => number) =>
    (
      await collect(
        aiSdkModel(
          new MockLanguageModelV3({
            doStream: () => Promise.reject(error),
          }),
          clock ? { clock } : {},
        ).stream(request()),
      )
    )[0];

  it("maps 429 to a retryable transient error with Retry-After in seconds", async () => {
    expect(await first(apiError(429, { responseHeaders: { "Retry-After": "7" } }))).toEqual({
      type: "error",
      message: "status 429",
      code: "HTTP_429",
      kind: "transient",
      retryable: true,
      retryAfterMs: 7000,
    });
  });

  it("a 429 with no message (an HTTP/2 response without a body has no status text) says its status", async () => {
    expect(
      await first(apiError(429, { message: "", responseHeaders: { "retry-after-ms": "20" } })),
    ).toEqual({
      type: "error",
      message: "HTTP 429 with no message from the provider",
      code: "HTTP_429",
      kind: "transient",
      retryable: true,
      retryAfterMs: 20,
    });
  });

  it("reads Retry-After as an HTTP date, and retry-after-ms", async () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(
      await first(
        apiError(503, { responseHeaders: { "retry-after": "Thu, 01 Jan 2026 00:00:30 GMT" } }),
        () => now,
      ),
    ).toMatchObject({ retryable: true, retryAfterMs: 30_000 });
    expect(
      await first(apiError(429, { responseHeaders: { "retry-after-ms": "250.5" } })),
    ).toMatchObject({
      retryAfterMs: 251,
    });
  });

  it("maps 5xx and 529 to retryable, 401 and 403 to auth, other 4xx to invalid", async () => {
    expect(await first(apiError(500))).toMatchObject({ kind: "transient", retryable: true });
    expect(await first(apiError(529))).toMatchObject({ kind: "transient", retryable: true });
    expect(await first(apiError(401))).toMatchObject({ kind: "auth", retryable: false });
    expect(await first(apiError(403))).toMatchObject({ kind: "auth", retryable: false });
    expect(await first(apiError(400))).toMatchObject({ kind: "invalid", retryable: false });
    expect(await first(apiError(404))).toMatchObject({ kind: "invalid", retryable: false });
  });

  it("recognises context-length errors of several providers as overflow", async () => {
    for (const message of [
      "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
      "prompt is too long: 208000 tokens > 200000 maximum",
      "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
      "Please reduce the length of the messages or completion.",
    ])
      expect(await first(apiError(400, { message }))).toMatchObject({
        kind: "overflow",
        retryable: false,
      });
    expect(
      await first(
        apiError(400, {
          message: "bad request",
          data: { error: { code: "context_length_exceeded", message: "too long" } },
        }),
      ),
    ).toMatchObject({ kind: "overflow", code: "context_length_exceeded" });
  });

  it("treats a network failure (fetch failed, ECONNRESET) as retryable", async () => {
    const cause = Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" });
    expect(await first(new TypeError("fetch failed", { cause }))).toMatchObject({
      kind: "transient",
      retryable: true,
      code: "UND_ERR_SOCKET",
    });
    expect(
      await first(
        apiError(undefined, {
          isRetryable: true,
          message: "Cannot connect to API: connect ECONNREFUSED",
        }),
      ),
    ).toMatchObject({
      kind: "transient",
      retryable: true,
    });
  });

  it("does not retry OpenAI's insufficient_quota, though it comes as a 429", async () => {
    const body = {
      error: {
        message: "You exceeded your current quota, please check your plan and billing details.",
        type: "insufficient_quota",
        param: null,
        code: "insufficient_quota",
      },
    };
    expect(
      await first(
        apiError(429, {
          message: body.error.message,
          isRetryable: true, // what the AI SDK says of every 429
          responseHeaders: { "retry-after": "20" },
          responseBody: JSON.stringify(body),
          data: body,
        }),
      ),
    ).toEqual({
      type: "error",
      message: body.error.message,
      code: "insufficient_quota",
      kind: "invalid",
      retryable: false,
    });
    // A rate limit with a code is still retried.
    expect(
      await first(
        apiError(429, { isRetryable: true, data: { error: { code: "rate_limit_exceeded" } } }),
      ),
    ).toMatchObject({ code: "rate_limit_exceeded", kind: "transient", retryable: true });
  });

  it("gives a failure before any response its network code (ECONNREFUSED, ...)", async () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), {
      code: "ECONNREFUSED",
    });
    expect(
      await first(
        apiError(undefined, {
          isRetryable: true,
          message: "Cannot connect to API: connect ECONNREFUSED 127.0.0.1:9",
          cause: new TypeError("fetch failed", { cause: refused }),
        }),
      ),
    ).toEqual({
      type: "error",
      message: "Cannot connect to API: connect ECONNREFUSED 127.0.0.1:9",
      code: "ECONNREFUSED",
      kind: "transient",
      retryable: true,
    });
  });

  it("keeps neither the URL nor the request body, and redacts given secrets", async () => {
    const error = apiError(401, { message: "Incorrect API key provided: sk-live-1234567890" });
    const events = await collect(
      aiSdkModel(new MockLanguageModelV3({ doStream: () => Promise.reject(error) }), {
        redact: ["sk-live-1234567890"],
      }).stream(request()),
    );
    const text = JSON.stringify(events);
    expect(text).not.toContain("secret");
    expect(text).not.toContain("sk-live-1234567890");
    expect(text).toContain("Incorrect API key provided: [redacted]");
  });
});
