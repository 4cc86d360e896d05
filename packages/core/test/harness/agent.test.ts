import { describe, expect, it } from "vitest";
import { defineTool, Harness, ScriptedModel, type Storage, type Tool } from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";
import { storedDoc } from "./support/harness.js";

const echo = (name: string): Tool =>
  defineTool({
    name,
    description: `the ${name} tool`,
    parameters: { type: "object" },
    replay: "safe",
    execute: () => ({ content: `${name} ran` }),
  });

async function open(storage: Storage, models: Record<string, ScriptedModel>) {
  return Harness.open(storage, {
    models,
    tools: [echo("search"), echo("read"), echo("write")],
    instructions: [
      { id: "persona", text: "You are careful." },
      { id: "rules", text: "Cite sources." },
    ],
    settings: { model: { temperature: 0.2, maxOutputTokens: 100 } },
  });
}

describe("conversation.configure", () => {
  it("stores the agent in durably.agent, and the next model call uses its model, tools, instructions and settings", async () => {
    const base = new ScriptedModel([{ text: "from default" }]);
    const fast = new ScriptedModel([{ text: "from fast" }]);
    const storage = new MemoryStorage();
    const harness = await open(storage, { default: base, fast });
    try {
      const root = await harness.root();
      const stored = await root.configure({
        model: "fast",
        tools: ["read", "search"],
        instructions: [
          { id: "rules", text: "Answer in French." },
          { id: "extra", text: "Be brief." },
        ],
        settings: { temperature: 0.9 },
      });
      expect(stored).toEqual({
        model: "fast",
        tools: ["read", "search"],
        instructions: [
          { id: "rules", text: "Answer in French." },
          { id: "extra", text: "Be brief." },
        ],
        settings: { temperature: 0.9 },
      });
      expect(await storedDoc(storage, "durably.agent", root.id)).toEqual(stored);
      expect(await (await root.submit({ type: "input", content: "hi" })).answerText()).toBe(
        "from fast",
      );
      expect(base.requests).toHaveLength(0);
      const request = fast.requests[0];
      expect(request?.tools.map((t) => t.name)).toEqual(["read", "search"]);
      // The conversation's "rules" replaced the harness's in place; "extra" came after.
      expect(request?.system).toBe("You are careful.\n\nAnswer in French.\n\nBe brief.");
      expect(request?.settings).toEqual({ temperature: 0.9, maxOutputTokens: 100 });
      expect((await root.entries()).at(-1)?.data).toMatchObject({ model: "fast" });
    } finally {
      await harness.close();
    }
  });

  it("null returns a field to the harness's, an absent field stays, and a string replaces all instructions", async () => {
    const model = new ScriptedModel([{ text: "a" }, { text: "b" }]);
    const harness = await open(new MemoryStorage(), { default: model });
    try {
      const root = await harness.root();
      await root.configure({ tools: ["write"], instructions: "Only this." });
      await (await root.submit({ type: "input", content: "1" })).wait();
      expect(await root.configure({ tools: null })).toEqual({ instructions: "Only this." });
      await (await root.submit({ type: "input", content: "2" })).wait();
      expect(model.requests.map((r) => [r.system, r.tools.map((t) => t.name)])).toEqual([
        ["Only this.", ["write"]],
        ["Only this.", ["search", "read", "write"]],
      ]);
      expect(await root.configuration()).toEqual({ instructions: "Only this." });
    } finally {
      await harness.close();
    }
  });

  it("refuses an unknown model or tool name and a bad field, naming it, and stores nothing", async () => {
    const storage = new MemoryStorage();
    const harness = await open(storage, { default: new ScriptedModel([]) });
    try {
      const root = await harness.root();
      await expect(root.configure({ model: "huge" })).rejects.toThrow(
        /configure: model "huge" is not one of the harness's models \("default"\)/,
      );
      await expect(root.configure({ tools: ["read", "delete"] })).rejects.toThrow(
        /configure: tools\[1\] "delete" is not one of the harness's tools \("search", "read", "write"\)/,
      );
      await expect(root.configure({ tools: ["read", "read"] })).rejects.toThrow(/listed twice/);
      await expect(root.configure({ instructions: [{ id: "", text: "x" }] })).rejects.toThrow(
        /configure: instructions\[0\]\.id/,
      );
      await expect(root.configure({ temperature: 1 } as never)).rejects.toThrow(
        /configure: temperature is not a configuration field/,
      );
      expect(await storedDoc(storage, "durably.agent", root.id)).toBeUndefined();
    } finally {
      await harness.close();
    }
  });

  it("a fork starts with its parent's current configuration, then each has its own", async () => {
    const model = new ScriptedModel([{ text: "one" }, { text: "two" }, { text: "three" }]);
    const harness = await open(new MemoryStorage(), { default: model, alt: model });
    try {
      const root = await harness.root();
      await (await root.submit({ type: "input", content: "q" })).wait();
      await root.configure({ tools: ["read"] });
      const child = await root.fork();
      expect(await child.configuration()).toEqual({ tools: ["read"] });
      await child.configure({ model: "alt", tools: ["search"] });
      expect(await root.configuration()).toEqual({ tools: ["read"] });
      expect((await child.view()).agent).toEqual({ model: "alt", tools: ["search"] });
    } finally {
      await harness.close();
    }
  });

  it("a call of a registered tool the conversation does not offer gets an error result", async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: "write", arguments: {} }] },
      { text: "ok" },
    ]);
    const harness = await open(new MemoryStorage(), { default: model });
    try {
      const root = await harness.root();
      await root.configure({ tools: ["read"] });
      await (await root.submit({ type: "input", content: "q" })).wait();
      const result = (await root.entries())[2]?.model?.[0];
      expect(result).toMatchObject({
        role: "toolResult",
        isError: true,
        content:
          'error: the tool "write" is not available in this conversation (available: "read")',
      });
    } finally {
      await harness.close();
    }
  });
});
