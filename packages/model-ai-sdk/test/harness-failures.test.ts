import type { ServerResponse } from "node:http";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import {
  startOpenAiTestServer,
  type OpenAiTestServer,
  type OpenAiTestServerOptions,
} from "@durably/contract-tests";
import { Harness, type Model, type SubmissionRecord } from "@durably/core";
import { MemoryStorage } from "@durably/storage-memory";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { afterEach, describe, expect, it } from "vitest";
import { aiSdkModel } from "../src/index.js";

let server: OpenAiTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function overHttp(options: OpenAiTestServerOptions): Promise<Model> {
  server = await startOpenAiTestServer(options);
  const provider = createOpenAICompatible({ name: "local", baseURL: server.url, apiKey: "k" });
  return aiSdkModel(provider.chatModel("scripted"));
}

/** Submits one input to a fresh harness and returns how it settled, with the transcript. */
async function ask(model: Model) {
  const harness = await Harness.open(new MemoryStorage(), {
    model,
    settings: { retry: { initialDelayMs: 20, maxDelayMs: 5_000 } },
  });
  try {
    const root = await harness.root();
    const startedAt = Date.now();
    const settled: SubmissionRecord = await (
      await root.submit({ type: "input", content: "q" })
    ).wait();
    const tookMs = Date.now() - startedAt;
    await harness.whenIdle();
    const tasks = await harness.session.read.scanTasks({ kind: "durably.tool" }, 10);
    return { settled, tookMs, entries: await root.entries(), toolTasks: tasks.items.length };
  } finally {
    await harness.close();
  }
}

function streaming(parts: unknown[]): Model {
  return aiSdkModel(
    new MockLanguageModelV3({
      doStream: () =>
        Promise.resolve({
          stream: convertArrayToReadableStream(parts as LanguageModelV3StreamPart[]),
        }),
    }),
  );
}

function sse(response: ServerResponse, payloads: (object | string)[]): void {
  response.writeHead(200, { "content-type": "text/event-stream" });
  for (const p of payloads)
    response.write(`data: ${typeof p === "string" ? p : JSON.stringify(p)}\n\n`);
  response.end();
}

const delta = (d: object, finish: string | null = null) => ({
  id: "x",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta: d, finish_reason: finish }],
});

describe("a Harness on aiSdkModel: provider failures settle or retry, never crash or hang", () => {
  it("a 429 with Retry-After is waited out and retried, and the input answered once", async () => {
    const model = await overHttp({
      turns: [
        {
          text: "fine now",
          failures: [{ message: "Rate limit", retryable: true, retryAfterMs: 1000 }],
        },
      ],
    });
    const { settled, tookMs, entries } = await ask(model);
    expect(settled.status).toBe("done");
    expect(tookMs).toBeGreaterThanOrEqual(990);
    expect(entries.map((e) => e.kind)).toEqual(["durably.user", "durably.assistant"]);
    expect(server?.requests).toHaveLength(2);
  });

  it("a server failure reported inside the stream (Ollama's api_error) is retried, its partial answer not stored", async () => {
    const model = await overHttp({
      turns: [{ text: "fine now" }],
      handle: ({ index }, response) => {
        if (index > 0) return false;
        sse(response, [
          delta({ content: "Hal" }),
          { error: { message: "unexpected EOF while running the model", type: "api_error" } },
          "[DONE]",
        ]);
        return true;
      },
    });
    const { settled, entries } = await ask(model);
    expect(settled.status).toBe("done");
    expect(entries.map((e) => e.kind)).toEqual(["durably.user", "durably.assistant"]);
    expect(entries.at(-1)?.model?.[0]).toMatchObject({
      content: [{ type: "text", text: "fine now" }],
    });
    expect(server?.requests).toHaveLength(2);
  });

  it("a context-length error settles at once as an overflow, without retrying", async () => {
    const model = await overHttp({
      turns: [
        {
          error: {
            message: "This model's maximum context length is 4096 tokens.",
            kind: "overflow",
          },
        },
      ],
    });
    const { settled } = await ask(model);
    expect(settled).toMatchObject({
      status: "unanswered",
      reason: "model-error",
      detail: { kind: "overflow", code: "context_length_exceeded", attempts: 1 },
    });
    expect(server?.requests).toHaveLength(1);
  });

  it("malformed tool-call JSON settles unanswered with a clear reason, and no tool runs", async () => {
    const model = await overHttp({
      handle: (_request, response) => {
        sse(response, [
          delta({ content: "calling " }),
          delta({
            tool_calls: [
              {
                index: 0,
                id: "c1",
                type: "function",
                function: { name: "add", arguments: '{"a": 2,' },
              },
            ],
          }),
          delta({}, "tool_calls"),
          "[DONE]",
        ]);
        return true;
      },
    });
    const { settled, toolTasks, entries } = await ask(model);
    expect(settled).toMatchObject({
      status: "unanswered",
      reason: "model-error",
      detail: { code: "INVALID_TOOL_CALL", kind: "invalid", attempts: 1 },
    });
    expect((settled.detail as { message: string }).message).toMatch(/called "add" \(call c1\)/);
    expect(toolTasks).toBe(0);
    // What streamed is kept as an error turn without the call, never as an answer.
    expect(entries.at(-1)?.model?.[0]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "calling " }],
      stopReason: "error",
    });
  });

  it("a stream that ends without a finish reason settles unanswered, not retried", async () => {
    const model = await overHttp({
      handle: (_request, response) => {
        sse(response, [delta({ content: "half" }), "[DONE]"]);
        return true;
      },
    });
    const { settled } = await ask(model);
    expect(settled).toMatchObject({ status: "unanswered", reason: "model-error" });
    expect((settled.detail as { message: string }).message).toMatch(/finish reason/);
    expect(server?.requests).toHaveLength(1);
  });

  it("a provider that throws synchronously settles unanswered with its message", async () => {
    const model = aiSdkModel(
      new MockLanguageModelV3({
        doStream: () => {
          throw new Error("invalid baseURL: not a URL");
        },
      }),
    );
    const { settled } = await ask(model);
    expect(settled).toMatchObject({
      status: "unanswered",
      reason: "model-error",
      detail: { message: "invalid baseURL: not a URL", retryable: false, attempts: 1 },
    });
  });

  it('a text-delta part without its delta settles unanswered: "undefined" is never stored as text', async () => {
    const model = streaming([
      { type: "text-delta", id: "t", delta: "partial " },
      { type: "text-delta", id: "t" },
      { type: "text-delta", id: "t", delta: "ok" },
      { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: {} },
    ]);
    const { settled, entries } = await ask(model);
    expect(settled).toMatchObject({
      status: "unanswered",
      reason: "model-error",
      detail: {
        message:
          'the provider sent a malformed "text-delta" stream part: delta is missing, not a string',
        code: "INVALID_STREAM_PART",
        kind: "invalid",
        retryable: false,
        attempts: 1,
      },
    });
    expect(entries.at(-1)?.model?.[0]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "partial " }],
      stopReason: "error",
    });
  });

  it("a finish part without usage numbers settles done, the answer stored with 0 tokens", async () => {
    const model = streaming([
      { type: "text-delta", id: "t", delta: "answer" },
      { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: {} },
    ]);
    const { settled, entries } = await ask(model);
    expect(settled.status).toBe("done");
    expect(entries.at(-1)).toMatchObject({
      kind: "durably.assistant",
      model: [
        { role: "assistant", content: [{ type: "text", text: "answer" }], stopReason: "stop" },
      ],
      data: { usage: { inputTokens: 0, outputTokens: 0 } },
    });
  });
});
