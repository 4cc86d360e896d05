import { describe, expect, it } from "vitest";
import {
  checkContent,
  contentText,
  defineTool,
  Harness,
  ROOT_CONVERSATION_ID,
  ScriptedModel,
  type Message,
  type ModelEvent,
  type ModelRequest,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";

async function collect(stream: AsyncIterable<ModelEvent>): Promise<ModelEvent[]> {
  const out: ModelEvent[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

const ask = (messages: Message[] = [{ role: "user", content: "hi" }]): ModelRequest => ({
  messages,
  tools: [],
  conversationId: ROOT_CONVERSATION_ID,
});

// A 1x1 transparent PNG.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

describe("ScriptedModel: what tests script", () => {
  it("streams reasoning before text and counts it in usage", async () => {
    const model = new ScriptedModel([{ reasoning: "think", text: "ok" }], { chunkSize: 3 });
    expect(await collect(model.stream(ask()))).toEqual([
      { type: "reasoning", delta: "thi" },
      { type: "reasoning", delta: "nk" },
      { type: "text", delta: "ok" },
      {
        type: "done",
        stopReason: "stop",
        usage: { inputTokens: 2, outputTokens: 7, reasoningTokens: 5 },
      },
    ]);
  });

  it("reports scripted usage with cached and reasoning tokens as given", async () => {
    const usage = { inputTokens: 100, outputTokens: 20, cachedInputTokens: 80, reasoningTokens: 5 };
    const model = new ScriptedModel([{ text: "x", usage }]);
    expect((await collect(model.stream(ask()))).at(-1)).toEqual({
      type: "done",
      stopReason: "stop",
      usage,
    });
  });

  it("ends a turn with an error event carrying retryable, retryAfterMs, kind and code", async () => {
    const model = new ScriptedModel([
      {
        error: {
          message: "rate limited",
          code: "HTTP_429",
          retryable: true,
          retryAfterMs: 1500,
          kind: "transient",
        },
      },
    ]);
    expect(await collect(model.stream(ask()))).toEqual([
      {
        type: "error",
        message: "rate limited",
        code: "HTTP_429",
        retryable: true,
        retryAfterMs: 1500,
        kind: "transient",
      },
    ]);
  });

  it("fails the first requests of a turn with its scripted failures, then answers", async () => {
    const model = new ScriptedModel([
      {
        text: "answer",
        failures: [
          { message: "overloaded", retryable: true, kind: "transient", text: "par" },
          { message: "connection reset", thrown: true },
        ],
      },
    ]);
    expect(await collect(model.stream(ask()))).toEqual([
      { type: "text", delta: "par" },
      { type: "error", message: "overloaded", retryable: true, kind: "transient" },
    ]);
    const thrown = await collect(model.stream(ask())).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(TypeError);
    expect(thrown).toMatchObject({
      message: "fetch failed",
      cause: { code: "ECONNRESET", message: "connection reset" },
    });
    const third = await collect(model.stream(ask()));
    expect(
      third.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta),
    ).toEqual(["answ", "er"]);
    expect(third.at(-1)).toMatchObject({ type: "done", stopReason: "stop" });
    expect(model.requests).toHaveLength(3);
  });

  it("keeps every request it was sent, system and settings included", async () => {
    const model = new ScriptedModel([{ text: "x" }]);
    const request: ModelRequest = {
      ...ask(),
      system: "Be brief.",
      settings: { temperature: 0.2, maxOutputTokens: 50 },
    };
    await collect(model.stream(request));
    expect(model.requests).toEqual([request]);
  });

  it("refuses a bad error or usage in the script, naming the field", () => {
    expect(() => new ScriptedModel([{ error: { message: "x", kind: "fatal" } as never }])).toThrow(
      /turns\[0\]\.error\.kind: must be one of overflow, auth, invalid, transient/,
    );
    expect(() => new ScriptedModel([{ failures: [{ message: "x", retryAfterMs: -1 }] }])).toThrow(
      /turns\[0\]\.failures\[0\]\.retryAfterMs/,
    );
    expect(
      () => new ScriptedModel([{ usage: { inputTokens: 1, outputTokens: 1, cached: 3 } as never }]),
    ).toThrow(/turns\[0\]\.usage\.cached: not a usage field/);
  });
});

describe("message content parts", () => {
  it("accepts a string or text and image parts, and copies them", () => {
    const parts = [
      { type: "text" as const, text: "look: " },
      { type: "image" as const, mediaType: "image/png", data: PNG },
    ];
    const checked = checkContent(parts, "content");
    expect(checked).toEqual(parts);
    expect(checked).not.toBe(parts);
    expect(checkContent("plain", "content")).toBe("plain");
    expect(contentText(parts)).toBe("look: [image image/png]");
  });

  it("refuses a bad part, naming its path", () => {
    expect(() => checkContent([{ type: "image", mediaType: "png", data: PNG }], "c")).toThrow(
      /c\[0\]\.mediaType: must be a media type/,
    );
    expect(() =>
      checkContent(
        [{ type: "image", mediaType: "image/png", data: "data:image/png;base64,AA==" }],
        "c",
      ),
    ).toThrow(/c\[0\]\.data: must be base64/);
    expect(() => checkContent([{ type: "audio" }], "c")).toThrow(
      /c\[0\]\.type: must be "text" or "image"/,
    );
    expect(() => checkContent([{ type: "text", text: "a", extra: 1 }], "c")).toThrow(
      /c\[0\]\.extra/,
    );
    expect(() => checkContent(3, "c")).toThrow(/c: must be a string or an array/);
  });
});

describe("Harness with the model port v2", () => {
  it("keeps reasoning on the assistant message and stores cached and reasoning token usage", async () => {
    const usage = { inputTokens: 40, outputTokens: 12, cachedInputTokens: 30, reasoningTokens: 4 };
    const model = new ScriptedModel([{ reasoning: "2 and 3 make 5", text: "5", usage }]);
    const harness = await Harness.open(new MemoryStorage(), { model });
    try {
      const root = await harness.root();
      const settled = await (await root.submit({ type: "input", content: "2+3?" })).wait();
      expect(settled.status).toBe("done");
      const answer = (await root.entries()).at(-1);
      expect(answer?.model).toEqual([
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "2 and 3 make 5" },
            { type: "text", text: "5" },
          ],
          stopReason: "stop",
        },
      ]);
      expect(answer?.data).toEqual({ model: "default", usage });
      expect(model.requests[0]?.conversationId).toBe(ROOT_CONVERSATION_ID);
    } finally {
      await harness.close();
    }
  });

  it("sends a tool's image result to the model as parts", async () => {
    const screenshot = defineTool({
      name: "screenshot",
      description: "Takes a screenshot",
      parameters: { type: "object" },
      replay: "safe",
      execute: () => ({
        content: [
          { type: "text", text: "the screen:" },
          { type: "image", mediaType: "image/png", data: PNG },
        ],
      }),
    });
    const model = new ScriptedModel([
      { toolCalls: [{ name: "screenshot", arguments: {} }] },
      { text: "a blank screen" },
    ]);
    const harness = await Harness.open(new MemoryStorage(), { model, tools: [screenshot] });
    try {
      const root = await harness.root();
      expect((await (await root.submit({ type: "input", content: "look" })).wait()).status).toBe(
        "done",
      );
      expect(model.requests[1]?.messages[2]).toEqual({
        role: "toolResult",
        toolCallId: "call_1_1",
        toolName: "screenshot",
        content: [
          { type: "text", text: "the screen:" },
          { type: "image", mediaType: "image/png", data: PNG },
        ],
        isError: false,
      });
    } finally {
      await harness.close();
    }
  });

  it("gives a tool that returns malformed parts an error result naming the field", async () => {
    const broken = defineTool({
      name: "broken",
      description: "Returns a bad image",
      parameters: { type: "object" },
      replay: "safe",
      execute: () => ({ content: [{ type: "image", mediaType: "image/png" }] }) as never,
    });
    const model = new ScriptedModel([
      { toolCalls: [{ name: "broken", arguments: {} }] },
      { text: "sorry" },
    ]);
    const harness = await Harness.open(new MemoryStorage(), { model, tools: [broken] });
    try {
      const root = await harness.root();
      await (await root.submit({ type: "input", content: "go" })).wait();
      const result = model.requests[1]?.messages[2];
      expect(result).toMatchObject({ role: "toolResult", isError: true });
      expect((result as { content: string }).content).toMatch(/content\[0\]\.data: must be base64/);
    } finally {
      await harness.close();
    }
  });
});

describe("AssistantDraft: the message a stream builds", () => {
  it("keeps parts in stream order, one reasoning part per block, metadata merged", async () => {
    const { AssistantDraft } = await import("../../src/harness/assistant-draft.js");
    const draft = new AssistantDraft();
    draft.reasoning({ type: "reasoning", delta: "a", id: "r1" });
    draft.reasoning({ type: "reasoning", delta: "b", id: "r1" });
    draft.reasoning({
      type: "reasoning",
      delta: "",
      id: "r1",
      providerMetadata: { anthropic: { signature: "sig1" } },
    });
    draft.reasoning({ type: "reasoning", delta: "c", id: "r2" });
    draft.text("hel");
    draft.text("lo");
    draft.toolCall({ type: "toolCall", id: "t1", name: "f", arguments: { x: 1 } });
    draft.reasoning({ type: "reasoning", delta: "", id: "r3" }); // empty, no metadata: nothing
    expect(draft.content()).toEqual([
      { type: "reasoning", text: "ab", providerMetadata: { anthropic: { signature: "sig1" } } },
      { type: "reasoning", text: "c" },
      { type: "text", text: "hello" },
      { type: "toolCall", id: "t1", name: "f", arguments: { x: 1 } },
    ]);
    expect(draft.withoutCalls().map((p) => p.type)).toEqual(["reasoning", "reasoning", "text"]);
    expect(draft.calls().map((c) => c.id)).toEqual(["t1"]);
  });
});
