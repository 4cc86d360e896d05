import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { ROOT_CONVERSATION_ID, type ConversationId, type ModelRequest } from "@durably/core";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { aiSdkModel } from "../src/index.js";

const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

const done: LanguageModelV3StreamPart = {
  type: "finish",
  finishReason: { unified: "stop", raw: "stop" },
  usage: {
    inputTokens: { total: 1, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 1, text: undefined, reasoning: undefined },
  },
};

function provider(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: () => Promise.resolve({ stream: convertArrayToReadableStream([done]) }),
  });
}

async function send(
  request: ModelRequest,
  options: Parameters<typeof aiSdkModel>[1] = {},
): Promise<MockLanguageModelV3["doStreamCalls"][number]> {
  const mock = provider();
  for await (const event of aiSdkModel(mock, options).stream(request))
    if (event.type === "error") throw new Error(event.message);
  const call = mock.doStreamCalls[0];
  if (!call) throw new Error("doStream was not called");
  return call;
}

describe("what aiSdkModel sends the provider", () => {
  it("sends the instructions as the system message, then the conversation in order", async () => {
    const call = await send({
      system: "You are terse.",
      conversationId: ROOT_CONVERSATION_ID,
      tools: [],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "what is this?" },
            { type: "image", mediaType: "image/png", data: PNG },
          ],
        },
        {
          role: "assistant",
          content: [
            {
              type: "reasoning",
              text: "look",
              providerMetadata: { anthropic: { signature: "s" } },
            },
            { type: "text", text: "checking" },
            { type: "toolCall", id: "c1", name: "zoom", arguments: { x: 1 } },
            { type: "toolCall", id: "c2", name: "ocr", arguments: {} },
          ],
          stopReason: "toolUse",
        },
        {
          role: "toolResult",
          toolCallId: "c1",
          toolName: "zoom",
          content: "zoomed",
          isError: false,
        },
        {
          role: "toolResult",
          toolCallId: "c2",
          toolName: "ocr",
          content: [
            { type: "text", text: "the crop:" },
            { type: "image", mediaType: "image/png", data: PNG },
          ],
          isError: false,
        },
        { role: "assistant", content: [], stopReason: "stop" },
        { role: "user", content: "and?" },
        {
          role: "toolResult",
          toolCallId: "c3",
          toolName: "zoom",
          content: "error: failed",
          isError: true,
        },
      ],
    });
    expect(call.prompt).toEqual([
      { role: "system", content: "You are terse." },
      {
        role: "user",
        content: [
          { type: "text", text: "what is this?" },
          { type: "file", mediaType: "image/png", data: PNG },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "look", providerOptions: { anthropic: { signature: "s" } } },
          { type: "text", text: "checking" },
          { type: "tool-call", toolCallId: "c1", toolName: "zoom", input: { x: 1 } },
          { type: "tool-call", toolCallId: "c2", toolName: "ocr", input: {} },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "zoom",
            output: { type: "text", value: "zoomed" },
          },
          {
            type: "tool-result",
            toolCallId: "c2",
            toolName: "ocr",
            output: {
              type: "content",
              value: [
                { type: "text", text: "the crop:" },
                { type: "image-data", data: PNG, mediaType: "image/png" },
              ],
            },
          },
        ],
      },
      { role: "user", content: [{ type: "text", text: "and?" }] },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c3",
            toolName: "zoom",
            output: { type: "error-text", value: "error: failed" },
          },
        ],
      },
    ]);
  });

  it("sends a tool result made of parts as text when it is all text, keeping the error flag", async () => {
    const result = (
      id: string,
      isError: boolean,
      content: Extract<ModelRequest["messages"][number], { role: "toolResult" }>["content"],
    ) => ({ role: "toolResult" as const, toolCallId: id, toolName: "read", isError, content });
    const call = await send({
      conversationId: ROOT_CONVERSATION_ID,
      tools: [],
      messages: [
        { role: "user", content: "read them" },
        {
          role: "assistant",
          stopReason: "toolUse",
          content: ["c1", "c2", "c3", "c4"].map((id) => ({
            type: "toolCall" as const,
            id,
            name: "read",
            arguments: {},
          })),
        },
        result("c1", true, [
          { type: "text", text: "ENOENT: " },
          { type: "text", text: "no such file a" },
        ]),
        result("c2", false, [
          { type: "text", text: "contents " },
          { type: "text", text: "of b" },
        ]),
        result("c3", true, [
          { type: "text", text: "render failed; last frame: " },
          { type: "image", mediaType: "image/png", data: PNG },
          { type: "text", text: " (frame 3)" },
        ]),
        result("c4", false, []),
      ],
    });
    const outputs = call.prompt
      .flatMap((m) => (m.role === "tool" ? m.content : []))
      .map((part) => (part.type === "tool-result" ? part.output : undefined));
    expect(outputs).toEqual([
      { type: "error-text", value: "ENOENT: no such file a" },
      { type: "text", value: "contents of b" },
      {
        type: "error-text",
        value: "render failed; last frame: [image/png image left out of this error] (frame 3)",
      },
      { type: "text", value: "" },
    ]);
  });

  it("sends no system message without instructions, and tools as function tools", async () => {
    const call = await send({
      conversationId: ROOT_CONVERSATION_ID,
      messages: [{ role: "user", content: "hi" }],
      tools: [
        {
          name: "add",
          description: "Add",
          parameters: { type: "object", properties: { a: { type: "number" } } },
        },
      ],
    });
    expect(call.prompt[0]?.role).toBe("user");
    expect(call.tools).toEqual([
      {
        type: "function",
        name: "add",
        description: "Add",
        inputSchema: { type: "object", properties: { a: { type: "number" } } },
      },
    ]);
    expect(call.toolChoice).toEqual({ type: "auto" });
  });

  it("sends settings, request settings over the adapter's, provider options merged by provider", async () => {
    const call = await send(
      {
        conversationId: 7 as ConversationId,
        messages: [{ role: "user", content: "hi" }],
        tools: [],
        settings: {
          temperature: 0.1,
          maxOutputTokens: 64,
          providerOptions: { openai: { reasoningEffort: "low" } },
        },
      },
      {
        settings: { temperature: 0.9, topP: 0.5, stopSequences: ["END"] },
        providerOptions: (r) => ({
          openai: { promptCacheKey: `conversation-${r.conversationId}`, reasoningEffort: "high" },
        }),
        headers: { "x-team": "durably" },
      },
    );
    expect(call).toMatchObject({
      temperature: 0.1,
      maxOutputTokens: 64,
      topP: 0.5,
      stopSequences: ["END"],
      providerOptions: {
        openai: { promptCacheKey: "conversation-7", reasoningEffort: "low" },
      },
      headers: { "x-team": "durably" },
    });
  });

  it("refuses a setting of the wrong type, naming it", async () => {
    await expect(
      send({
        conversationId: ROOT_CONVERSATION_ID,
        messages: [],
        tools: [],
        settings: { maxOutputTokens: 1.5 },
      }),
    ).rejects.toThrow(/settings\.maxOutputTokens: must be an integer/);
  });
});
