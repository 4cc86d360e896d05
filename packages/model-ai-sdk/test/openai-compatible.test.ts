import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import {
  startOpenAiTestServer,
  type OpenAiTestServer,
  type OpenAiTestServerOptions,
} from "@durably/contract-tests";
import { ROOT_CONVERSATION_ID, type ModelEvent, type ModelRequest } from "@durably/core";
import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { aiSdkModel } from "../src/index.js";

const API_KEY = "sk-durably-test-0123456789abcdef";

let server: OpenAiTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: OpenAiTestServerOptions) {
  server = await startOpenAiTestServer(options);
  const provider = createOpenAICompatible({
    name: "local",
    baseURL: server.url,
    apiKey: API_KEY,
    includeUsage: true,
  });
  return { server, model: aiSdkModel(provider.chatModel("scripted")) };
}

const ask = (content = "hi", extra: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [{ role: "user", content }],
  tools: [],
  conversationId: ROOT_CONVERSATION_ID,
  ...extra,
});

async function collect(
  stream: AsyncIterable<ModelEvent>,
  onEvent?: (event: ModelEvent) => void,
): Promise<ModelEvent[]> {
  const out: ModelEvent[] = [];
  for await (const event of stream) {
    out.push(event);
    onEvent?.(event);
  }
  return out;
}

const texts = (events: readonly ModelEvent[]): string[] =>
  events.flatMap((e) => (e.type === "text" ? [e.delta] : []));

function sse(response: ServerResponse, payloads: (object | string)[], end = true): void {
  response.writeHead(200, { "content-type": "text/event-stream" });
  for (const p of payloads)
    response.write(`data: ${typeof p === "string" ? p : JSON.stringify(p)}\n\n`);
  if (end) response.end();
}

const delta = (d: object, finish: string | null = null) => ({
  id: "x",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta: d, finish_reason: finish }],
});

describe("aiSdkModel over @ai-sdk/openai-compatible and a local SSE server", () => {
  it("streams text chunk by chunk, with usage including cached and reasoning tokens", async () => {
    const { model, server } = await start({
      turns: [
        {
          reasoning: "simple",
          text: "Hello there",
          usage: { inputTokens: 20, outputTokens: 9, cachedInputTokens: 16, reasoningTokens: 6 },
        },
      ],
      chunkSize: 3,
    });
    const events = await collect(model.stream(ask("hi", { system: "Be kind." })));
    expect(texts(events)).toEqual(["Hel", "lo ", "the", "re"]);
    expect(
      events.filter((e) => e.type === "reasoning").map((e) => (e as { delta: string }).delta),
    ).toEqual(["sim", "ple"]);
    expect(events.at(-1)).toEqual({
      type: "done",
      stopReason: "stop",
      usage: { inputTokens: 20, outputTokens: 9, cachedInputTokens: 16, reasoningTokens: 6 },
    });
    const sent = server.requests[0];
    expect(sent?.body.messages).toEqual([
      { role: "system", content: "Be kind." },
      { role: "user", content: "hi" },
    ]);
    expect(sent?.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it("emits a tool call whose arguments arrived in pieces once, complete", async () => {
    const { model, server } = await start({
      turns: [
        {
          text: "let me add",
          toolCalls: [
            { id: "call_a", name: "add", arguments: { a: 2, b: 3, note: "two plus three" } },
          ],
        },
      ],
    });
    const events = await collect(
      model.stream(
        ask("2+3?", {
          tools: [{ name: "add", description: "Add", parameters: { type: "object" } }],
        }),
      ),
    );
    expect(events.filter((e) => e.type === "toolCall")).toEqual([
      {
        type: "toolCall",
        id: "call_a",
        name: "add",
        arguments: { a: 2, b: 3, note: "two plus three" },
      },
    ]);
    expect(events.at(-1)).toMatchObject({ type: "done", stopReason: "toolUse" });
    expect(server.requests[0]?.body.tools).toEqual([
      {
        type: "function",
        function: { name: "add", description: "Add", parameters: { type: "object" } },
      },
    ]);
  });

  it("a 429 with Retry-After seconds is retryable, with the wait", async () => {
    const { model } = await start({
      turns: [
        {
          text: "ok",
          failures: [{ message: "Rate limit reached", retryable: true, retryAfterMs: 2000 }],
        },
      ],
    });
    expect(await collect(model.stream(ask()))).toEqual([
      {
        type: "error",
        message: "Rate limit reached",
        code: "rate_limit_error",
        kind: "transient",
        retryable: true,
        retryAfterMs: 2000,
      },
    ]);
    // The failure was used up: the next request is answered.
    expect(texts(await collect(model.stream(ask())))).toEqual(["ok"]);
  });

  it("a 429 with Retry-After as an HTTP date waits until that date", async () => {
    const { model } = await start({
      handle: (_request, response) => {
        response.writeHead(429, {
          "content-type": "application/json",
          "retry-after": new Date(Date.now() + 60_000).toUTCString(),
        });
        response.end(JSON.stringify({ error: { message: "slow down" } }));
        return true;
      },
    });
    const [event] = await collect(model.stream(ask()));
    expect(event).toMatchObject({ type: "error", retryable: true, kind: "transient" });
    const wait = (event as { retryAfterMs: number }).retryAfterMs;
    expect(wait).toBeGreaterThan(55_000);
    expect(wait).toBeLessThanOrEqual(60_000);
  });

  it("a 500 is retryable", async () => {
    const { model } = await start({
      turns: [{ failures: [{ message: "upstream crashed", code: "HTTP_500" }] }],
    });
    expect((await collect(model.stream(ask())))[0]).toMatchObject({
      type: "error",
      message: "upstream crashed",
      kind: "transient",
      retryable: true,
      code: "server_error",
    });
  });

  it("a connection cut mid-stream gives the text so far, then a retryable network error", async () => {
    const { model } = await start({
      turns: [
        {
          failures: [{ message: "cut", text: "partial answ", retryable: true }],
        },
      ],
      chunkSize: 4,
    });
    const events = await collect(model.stream(ask()));
    expect(texts(events).join("")).toBe("partial answ");
    expect(events.at(-1)).toMatchObject({ type: "error", kind: "transient", retryable: true });
  });

  it("a connection closed before any response is a retryable network error", async () => {
    const { model } = await start({
      turns: [{ failures: [{ message: "reset", thrown: true }] }],
    });
    expect((await collect(model.stream(ask())))[0]).toMatchObject({
      type: "error",
      kind: "transient",
      retryable: true,
    });
  });

  it("a refused connection is a retryable network error", async () => {
    const { model, server } = await start({ turns: [] });
    await server.close();
    expect((await collect(model.stream(ask())))[0]).toMatchObject({
      type: "error",
      kind: "transient",
      retryable: true,
    });
  });

  it("a context-length error is an overflow, not retryable", async () => {
    const { model } = await start({
      turns: [
        {
          error: {
            message:
              "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
            kind: "overflow",
          },
        },
      ],
    });
    expect(await collect(model.stream(ask()))).toEqual([
      {
        type: "error",
        message: expect.stringMatching(/maximum context length is 8192/) as string,
        code: "context_length_exceeded",
        kind: "overflow",
        retryable: false,
      },
    ]);
  });

  it("a 401 is an auth error, and the API key is in no event", async () => {
    const { model } = await start({
      turns: [{ error: { message: "Incorrect API key provided.", kind: "auth" } }],
    });
    const events = await collect(model.stream(ask()));
    expect(events[0]).toMatchObject({ type: "error", kind: "auth", retryable: false });
    expect(JSON.stringify(events)).not.toContain(API_KEY);
  });

  it("malformed tool-call JSON from the server is a non-retryable error, not a crash", async () => {
    const { model } = await start({
      handle: (_request, response) => {
        sse(response, [
          delta({
            tool_calls: [
              {
                index: 0,
                id: "call_bad",
                type: "function",
                function: { name: "add", arguments: "" },
              },
            ],
          }),
          delta({ tool_calls: [{ index: 0, function: { arguments: '{"a": 2, "b": ' } }] }),
          delta({}, "tool_calls"),
          "[DONE]",
        ]);
        return true;
      },
    });
    const events = await collect(model.stream(ask()));
    expect(events).toEqual([
      expect.objectContaining({
        type: "error",
        code: "INVALID_TOOL_CALL",
        kind: "invalid",
        retryable: false,
        message: expect.stringMatching(/called "add" \(call call_bad\)/) as string,
      }),
    ]);
  });

  it("a stream that ends without a finish reason is a non-retryable error", async () => {
    const { model } = await start({
      handle: (_request, response) => {
        sse(response, [delta({ content: "half" }), "[DONE]"]);
        return true;
      },
    });
    const events = await collect(model.stream(ask()));
    expect(texts(events)).toEqual(["half"]);
    expect(events.at(-1)).toMatchObject({ type: "error", kind: "invalid", retryable: false });
  });

  it("an error chunk mid-stream ends the stream with that error", async () => {
    const { model } = await start({
      handle: (_request, response) => {
        sse(response, [
          delta({ content: "so" }),
          { error: { message: "The server is overloaded", type: "server_error" } },
        ]);
        return true;
      },
    });
    const events = await collect(model.stream(ask()));
    expect(events.at(-1)).toMatchObject({
      type: "error",
      message: "The server is overloaded",
      retryable: true,
      kind: "transient",
    });
  });

  it("aborting mid-stream rejects with the reason and closes the connection", async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const { model } = await start({
      handle: (_request, response) => {
        response.on("close", () => closed());
        sse(response, [delta({ content: "first " })], false);
        const timer = setInterval(
          () => response.write(`data: ${JSON.stringify(delta({ content: "more " }))}\n\n`),
          5,
        );
        response.on("close", () => clearInterval(timer));
        return true;
      },
    });
    const controller = new AbortController();
    const reason = new Error("aborted by the test");
    const run = collect(model.stream(ask(), { signal: controller.signal }), (event) => {
      if (event.type === "text" && event.delta === "more ") controller.abort(reason);
    });
    await expect(run).rejects.toBe(reason);
    await connectionClosed;
  });
});
