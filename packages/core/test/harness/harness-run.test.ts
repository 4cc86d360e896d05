import { describe, expect, it } from "vitest";
import {
  defineTool,
  Harness,
  ScriptedModel,
  type EntryRecord,
  type Message,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";

const add = defineTool<{ a: number; b: number }>({
  name: "add",
  description: "Add two numbers",
  parameters: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
  },
  replay: "safe",
  execute: async ({ a, b }, api) => {
    await api.output(`adding ${a} and ${b}`);
    return { content: String(a + b) };
  },
});

const models = (entries: readonly EntryRecord[]): Message[] =>
  entries.flatMap((e) => e.model ?? []);

describe("Harness: a run with a tool call", () => {
  it("answers, with the tool result between the call and the answer", async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] },
      { text: "2 + 3 = 5" },
    ]);
    const harness = await Harness.open(new MemoryStorage(), { model, tools: [add] });
    const root = await harness.root();
    const sub = await root.submit({ type: "input", content: "What is 2+3?", requestId: "q1" });
    const settled = await sub.wait();
    expect(settled.status).toBe("done");
    const entries = await root.entries();
    expect(entries.map((e) => e.kind)).toEqual([
      "durably.user",
      "durably.assistant",
      "durably.tool-result",
      "durably.assistant",
    ]);
    expect(settled.answer).toBe(entries[3]?.id);
    expect(models(entries)).toEqual([
      { role: "user", content: "What is 2+3?" },
      {
        role: "assistant",
        content: [{ type: "toolCall", id: "call_1_1", name: "add", arguments: { a: 2, b: 3 } }],
        stopReason: "toolUse",
      },
      { role: "toolResult", toolCallId: "call_1_1", toolName: "add", content: "5", isError: false },
      { role: "assistant", content: [{ type: "text", text: "2 + 3 = 5" }], stopReason: "stop" },
    ]);
    const view = await root.view();
    expect(view.live).toEqual({ run: null, generation: null, tools: {} });
    // the second request saw the call and its result
    expect(model.requests[1]?.messages).toHaveLength(3);
    await harness.close();
  });
});
