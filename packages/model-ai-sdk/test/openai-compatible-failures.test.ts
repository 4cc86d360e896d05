import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import {
  startOpenAiTestServer,
  type OpenAiTestServer,
  type OpenAiTestServerOptions,
} from "@durably/contract-tests";
import { ROOT_CONVERSATION_ID, type ModelEvent, type ModelRequest } from "@durably/core";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { aiSdkModel } from "../src/index.js";

let server: OpenAiTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const modelAt = (baseURL: string) =>
  aiSdkModel(createOpenAICompatible({ name: "local", baseURL, apiKey: "k" }).chatModel("m"));

async function start(options: OpenAiTestServerOptions) {
  server = await startOpenAiTestServer(options);
  return { server, model: modelAt(server.url) };
}

const ask = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  conversationId: ROOT_CONVERSATION_ID,
  ...extra,
});

async function collect(stream: AsyncIterable<ModelEvent>): Promise<ModelEvent[]> {
  const out: ModelEvent[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

function sse(response: ServerResponse, payloads: (object | string)[]): void {
  response.writeHead(200, { "content-type": "text/event-stream" });
  for (const p of payloads)
    response.write(`data: ${typeof p === "string" ? p : JSON.stringify(p)}\n\n`);
  response.end();
}

const delta = (d: object) => ({
  id: "x",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta: d, finish_reason: null }],
});

/** A model whose server answers every request with some text, then `error` as an SSE chunk. */
async function failingMidStream(error: object) {
  return (
    await start({
      handle: (_request, response) => {
        sse(response, [delta({ content: "Half an ans" }), { error }, "[DONE]"]);
        return true;
      },
    })
  ).model;
}

describe("aiSdkModel over @ai-sdk/openai-compatible: failures as real servers send them", () => {
  it("a vLLM engine failure mid-stream (type InternalServerError, code 500) is retryable", async () => {
    const model = await failingMidStream({
      message: "Internal server error",
      type: "InternalServerError",
      param: null,
      code: 500,
    });
    expect(await collect(model.stream(ask()))).toEqual([
      { type: "text", delta: "Half an ans" },
      {
        type: "error",
        message: "Internal server error",
        code: "InternalServerError",
        kind: "transient",
        retryable: true,
      },
    ]);
  });

  it("an Ollama model failure mid-stream (type api_error) is retryable", async () => {
    const model = await failingMidStream({
      message: "an error was encountered while running the model: unexpected EOF",
      type: "api_error",
    });
    expect((await collect(model.stream(ask()))).at(-1)).toMatchObject({
      type: "error",
      code: "api_error",
      kind: "transient",
      retryable: true,
    });
  });

  it("a gateway's numeric 502 mid-stream is retryable, its code the status", async () => {
    const model = await failingMidStream({ message: "Upstream provider error", code: 502 });
    expect((await collect(model.stream(ask()))).at(-1)).toMatchObject({
      type: "error",
      code: "HTTP_502",
      kind: "transient",
      retryable: true,
    });
  });

  it("OpenAI's insufficient_quota (a 429) is not retryable: no wait restores credit", async () => {
    const { model, server } = await start({
      handle: (_request, response) => {
        response.writeHead(429, { "content-type": "application/json", "retry-after": "1" });
        response.end(
          JSON.stringify({
            error: {
              message:
                "You exceeded your current quota, please check your plan and billing details.",
              type: "insufficient_quota",
              param: null,
              code: "insufficient_quota",
            },
          }),
        );
        return true;
      },
    });
    expect(await collect(model.stream(ask()))).toEqual([
      {
        type: "error",
        message: "You exceeded your current quota, please check your plan and billing details.",
        code: "insufficient_quota",
        kind: "invalid",
        retryable: false,
      },
    ]);
    // The AI SDK retries nothing itself here (maxRetries is the caller's): one request.
    expect(server.requests).toHaveLength(1);
  });

  it("insufficient_quota inside the stream is not retryable either", async () => {
    const model = await failingMidStream({
      message: "You exceeded your current quota",
      type: "insufficient_quota",
      code: "insufficient_quota",
    });
    expect((await collect(model.stream(ask()))).at(-1)).toMatchObject({
      type: "error",
      code: "insufficient_quota",
      kind: "invalid",
      retryable: false,
    });
  });

  it("a refused connection carries the network code, ECONNREFUSED", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const events = await collect(modelAt(`http://127.0.0.1:${port}/v1`).stream(ask()));
    expect(events).toEqual([
      expect.objectContaining({
        type: "error",
        code: "ECONNREFUSED",
        kind: "transient",
        retryable: true,
      }),
    ]);
  });

  it("a connection reset before any response carries the network code", async () => {
    const { model } = await start({
      handle: (_request, response) => {
        response.socket?.destroy();
        return true;
      },
    });
    const [event] = await collect(model.stream(ask()));
    expect(event).toMatchObject({ type: "error", kind: "transient", retryable: true });
    expect((event as { code?: string }).code).toMatch(/^(ECONNRESET|UND_ERR_SOCKET)$/);
  });

  it("sends a failed tool's text parts as its text, not a JSON array of parts", async () => {
    const { model, server } = await start({ turns: [{ text: "ok" }] });
    await collect(
      model.stream(
        ask({
          messages: [
            { role: "user", content: "read a, then b" },
            {
              role: "assistant",
              stopReason: "toolUse",
              content: [
                { type: "toolCall", id: "c1", name: "read", arguments: { p: "a" } },
                { type: "toolCall", id: "c2", name: "read", arguments: { p: "b" } },
              ],
            },
            {
              role: "toolResult",
              toolCallId: "c1",
              toolName: "read",
              isError: true,
              content: [
                { type: "text", text: "ENOENT: " },
                { type: "text", text: "no such file a" },
              ],
            },
            {
              role: "toolResult",
              toolCallId: "c2",
              toolName: "read",
              isError: false,
              content: [{ type: "text", text: "contents of b" }],
            },
          ],
        }),
      ),
    );
    const sent = server.requests[0]?.body.messages as { role: string }[];
    expect(sent.filter((m) => m.role === "tool")).toEqual([
      { role: "tool", tool_call_id: "c1", content: "ENOENT: no such file a" },
      { role: "tool", tool_call_id: "c2", content: "contents of b" },
    ]);
  });
});
