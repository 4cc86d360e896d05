import { describe, expect, it } from "vitest";
import {
  defineTool,
  runToolCall,
  toolsByName,
  type ConversationId,
  type ToolApi,
  type ToolCallPart,
} from "../../src/index.js";

const add = defineTool<{ a: number; b: number }>({
  name: "add",
  description: "Add two numbers",
  parameters: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
  },
  replay: "safe",
  execute: ({ a, b }) => ({ content: String(a + b) }),
});

function api(overrides: Partial<ToolApi> = {}): ToolApi & { outputs: string[] } {
  const outputs: string[] = [];
  return {
    signal: new AbortController().signal,
    toolCallId: "c1",
    conversationId: 1 as ConversationId,
    attempt: 1,
    output: (text) => {
      outputs.push(text);
      return Promise.resolve();
    },
    // runToolCall never calls these itself; a tool that does is tested through a harness.
    commit: () => Promise.reject(new Error("not in a harness")),
    memo: () => Promise.reject(new Error("not in a harness")),
    runConversation: () => Promise.reject(new Error("not in a harness")),
    outputs,
    ...overrides,
  };
}

const call = (name: string, args: ToolCallPart["arguments"]): ToolCallPart => ({
  type: "toolCall",
  id: "c1",
  name,
  arguments: args,
});

describe("defineTool", () => {
  it("returns a frozen tool with the spec the model sees", () => {
    expect(Object.isFrozen(add)).toBe(true);
    expect(add.spec).toEqual({
      name: "add",
      description: "Add two numbers",
      parameters: add.parameters,
    });
  });

  it("refuses a bad definition, naming the field", () => {
    const base = {
      name: "t",
      description: "",
      parameters: { type: "object" as const },
      replay: "safe" as const,
      execute: () => ({ content: "" }),
    };
    expect(() => defineTool({ ...base, name: "has space" })).toThrow(/name must be 1 to 64/);
    expect(() => defineTool({ ...base, replay: "maybe" as never })).toThrow(
      /replay must be "safe" or "unsafe"/,
    );
    expect(() => defineTool({ ...base, parameters: { type: "string" } })).toThrow(
      /parameters.type must be "object"/,
    );
    expect(() =>
      defineTool({
        ...base,
        parameters: { type: "object", properties: { x: { if: { type: "string" } } } } as never,
      }),
    ).toThrow(/tool "t": parameters\.properties\.x\.if: unsupported/);
  });

  it("refuses a field it does not know, so a misspelled one never goes unnoticed", () => {
    const base = {
      name: "deploy",
      description: "",
      parameters: { type: "object" as const },
      replay: "unsafe" as const,
      execute: () => ({ content: "" }),
    };
    // The AI SDK's spelling: accepted silently, the tool would run without asking.
    expect(() => defineTool({ ...base, needsApproval: true } as never)).toThrow(
      new TypeError(
        'defineTool: tool "deploy": needsApproval is not a tool field (name, description, parameters, replay, sequential, approval, execute)',
      ),
    );
    expect(() => defineTool({ ...base, timeout: 5 } as never)).toThrow(
      /defineTool: tool "deploy": timeout is not a tool field/,
    );
  });

  it("takes a tool spread with changes: its spec is derived again", () => {
    const sum = defineTool({ ...add, name: "sum" });
    expect(sum.spec).toEqual({
      name: "sum",
      description: "Add two numbers",
      parameters: add.parameters,
    });
  });

  it("refuses two tools with one name", () => {
    expect(() => toolsByName([add, add])).toThrow(/tools\[1\]: duplicate tool name "add"/);
  });
});

describe("runToolCall", () => {
  const tools = toolsByName([add]);

  it("runs a valid call to its result", async () => {
    expect(await runToolCall(tools, call("add", { a: 2, b: 3 }), api())).toEqual({
      role: "toolResult",
      toolCallId: "c1",
      toolName: "add",
      content: "5",
      isError: false,
    });
  });

  it("gives the model an error result for invalid arguments, with the path, without running the tool", async () => {
    let ran = false;
    const strict = defineTool({
      ...add,
      execute: () => {
        ran = true;
        return { content: "" };
      },
    });
    const r = await runToolCall(toolsByName([strict]), call("add", { a: 2 }), api());
    expect(r.isError).toBe(true);
    expect(r.content).toBe(
      'error: invalid arguments for "add": arguments.b: required property is missing',
    );
    expect(ran).toBe(false);
  });

  it("gives an error result for an unknown tool, listing the known ones", async () => {
    const r = await runToolCall(tools, call("mul", {}), api());
    expect(r).toMatchObject({ isError: true, toolName: "mul" });
    expect(r.content).toBe('error: unknown tool "mul" (available: "add")');
  });

  it("turns a throwing tool and a malformed return into error results", async () => {
    const boom = defineTool({
      name: "boom",
      description: "",
      parameters: { type: "object" },
      replay: "unsafe",
      execute: () => {
        throw new RangeError("disk full");
      },
    });
    const odd = defineTool({
      name: "odd",
      description: "",
      parameters: { type: "object" },
      replay: "unsafe",
      execute: () => ({ text: "no content" }) as never,
    });
    const set = toolsByName([boom, odd]);
    expect((await runToolCall(set, call("boom", {}), api())).content).toBe(
      "error: boom threw RangeError: disk full",
    );
    const r = await runToolCall(set, call("odd", {}), api());
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/odd returned \{"text":"no content"\}, not \{ content: string/);
  });

  it("passes output through and keeps a tool's own isError", async () => {
    const say = defineTool({
      name: "say",
      description: "",
      parameters: { type: "object" },
      replay: "safe",
      execute: async (_args, a) => {
        await a.output("one ");
        await a.output("two");
        return { content: "failed politely", isError: true };
      },
    });
    const a = api();
    const r = await runToolCall(toolsByName([say]), call("say", {}), a);
    expect(a.outputs).toEqual(["one ", "two"]);
    expect(r).toMatchObject({ content: "failed politely", isError: true });
  });

  it("rethrows the abort reason when the signal aborts, so the caller decides", async () => {
    const controller = new AbortController();
    const reason = new Error("closing");
    const slow = defineTool({
      name: "slow",
      description: "",
      parameters: { type: "object" },
      replay: "safe",
      execute: (_args, a) =>
        new Promise((_resolve, reject) => {
          a.signal.addEventListener("abort", () => reject(new Error("interrupted by abort")));
          controller.abort(reason);
        }),
    });
    await expect(
      runToolCall(toolsByName([slow]), call("slow", {}), api({ signal: controller.signal })),
    ).rejects.toBe(reason);
  });
});
