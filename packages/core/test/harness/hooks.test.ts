import { describe, expect, it } from "vitest";
import {
  contentText,
  defineTool,
  Harness,
  ScriptedModel,
  type HarnessOptions,
  type Hooks,
  type ScriptedTurn,
  type Tool,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";

function lookupTool(ran: string[]): Tool {
  return defineTool<{ q: string }>({
    name: "lookup",
    description: "Looks up",
    parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
    replay: "safe",
    execute: ({ q }) => {
      ran.push(q);
      return { content: `secret answer for ${q}`, details: { source: "db" } };
    },
  });
}

const callLookup: ScriptedTurn = {
  text: "looking",
  toolCalls: [{ name: "lookup", arguments: { q: "x" } }],
};

async function open(turns: ScriptedTurn[], options: Partial<HarnessOptions> = {}) {
  const ran: string[] = [];
  const model = new ScriptedModel(turns);
  const harness = await Harness.open(new MemoryStorage(), {
    model,
    tools: [lookupTool(ran)],
    ...options,
  });
  return { ran, model, harness, root: await harness.root() };
}

const kinds = (entries: readonly { kind: string }[]) => entries.map((e) => e.kind).join(", ");

describe("hooks > around each step", () => {
  it("beforeRequest changes what the model is sent; afterResponse sees each answer before it is stored", async () => {
    const seen: string[] = [];
    const hooks: Hooks = {
      beforeRequest: (request) => ({ ...request, system: "Be brief." }),
      afterResponse: (message) => {
        seen.push(message.stopReason);
      },
    };
    const mutating: Hooks = {
      // Changing the copy it was given and returning nothing sends the copy.
      beforeRequest: (request) => {
        (request as { settings?: unknown }).settings = { temperature: 0 };
        return undefined;
      },
    };
    const { model, harness, root } = await open([callLookup, { text: "done" }], {
      hooks: [hooks, mutating],
    });
    try {
      await (await root.submit({ type: "input", content: "find x" })).wait();
      expect(model.requests.map((r) => [r.system, r.settings])).toEqual([
        ["Be brief.", { temperature: 0 }],
        ["Be brief.", { temperature: 0 }],
      ]);
      expect(seen).toEqual(["toolUse", "stop"]);
    } finally {
      await harness.close();
    }
  });

  it("beforeTool can block a call: the model gets 'blocked: <reason>', the tool never runs, the run goes on", async () => {
    const { ran, model, harness, root } = await open([callLookup, { text: "ok" }], {
      hooks: {
        beforeTool: (call) => (call.name === "lookup" ? { block: "no lookups today" } : undefined),
      },
    });
    try {
      const settled = await (await root.submit({ type: "input", content: "find x" })).wait();
      expect(settled.status).toBe("done");
      expect(ran).toEqual([]);
      const result = model.requests[1]?.messages.find((m) => m.role === "toolResult");
      expect(result).toMatchObject({ content: "blocked: no lookups today", isError: true });
    } finally {
      await harness.close();
    }
  });

  it("afterTool replaces the stored result: the model and the transcript get the hook's", async () => {
    const { ran, model, harness, root } = await open([callLookup, { text: "ok" }], {
      hooks: {
        afterTool: (_call, result, context) => ({
          content: contentText(result.content).replace("secret", "[redacted]"),
          details: { redactedBy: "hook", attempt: context.attempt },
        }),
      },
    });
    try {
      await (await root.submit({ type: "input", content: "find x" })).wait();
      expect(ran).toEqual(["x"]);
      const stored = (await root.entries()).find((e) => e.kind === "durably.tool-result");
      expect(stored?.model?.[0]).toMatchObject({
        content: "[redacted] answer for x",
        isError: false,
      });
      expect(stored?.data).toMatchObject({ details: { redactedBy: "hook", attempt: 1 } });
      expect(JSON.stringify(model.requests[1])).not.toContain("secret");
    } finally {
      await harness.close();
    }
  });

  it("runs a conversation's named hook sets after the harness's, and only for that conversation", async () => {
    const calls: string[] = [];
    const { harness, root } = await open([{ text: "a" }, { text: "b" }], {
      hooks: { afterResponse: () => void calls.push("harness") },
      hookSets: { audit: { afterResponse: () => void calls.push("audit") } },
    });
    try {
      await root.configure({ hooks: ["audit"] });
      await (await root.submit({ type: "input", content: "one" })).wait();
      const other = await harness.createConversation();
      await (await other.submit({ type: "input", content: "two" })).wait();
      expect(calls).toEqual(["harness", "audit", "harness"]);
      expect((await root.configuration()).hooks).toEqual(["audit"]);
    } finally {
      await harness.close();
    }
  });
});

describe("hooks > a hook that fails ends the run with its error, and nothing of its step is stored", () => {
  it("afterResponse throwing: the answer is not stored; the run settles hook-failed with the error", async () => {
    const { model, harness, root } = await open([{ text: "an answer" }], {
      hooks: {
        afterResponse: () => {
          throw new RangeError("policy check failed");
        },
      },
    });
    try {
      const settled = await (await root.submit({ type: "input", content: "hi" })).wait();
      expect(settled).toMatchObject({
        status: "unanswered",
        reason: "hook-failed",
        detail: {
          name: "HookFailed",
          code: "HOOK_FAILED",
          message: "the afterResponse hook threw RangeError: policy check failed",
        },
      });
      expect(kinds(await root.entries())).toBe("durably.user");
      expect(model.requests).toHaveLength(1);
      expect((await root.view()).live).toMatchObject({ run: null, generation: null, tools: {} });
    } finally {
      await harness.close();
    }
  });

  it("beforeTool throwing: the tool never runs, the model is not called again, the run settles hook-failed", async () => {
    const { ran, model, harness, root } = await open([callLookup, { text: "never" }], {
      hooks: {
        beforeTool: () => {
          throw new Error("audit log unreachable");
        },
      },
    });
    try {
      const settled = await (await root.submit({ type: "input", content: "find x" })).wait();
      expect(settled).toMatchObject({
        status: "unanswered",
        reason: "hook-failed",
        detail: {
          code: "HOOK_FAILED",
          message: "the beforeTool hook threw Error: audit log unreachable",
        },
      });
      expect(ran).toEqual([]);
      expect(model.requests).toHaveLength(1);
      expect(kinds(await root.entries())).toBe(
        "durably.user, durably.assistant, durably.tool-result",
      );
    } finally {
      await harness.close();
    }
  });

  it("beforeRequest returning a request that is not JSON: a HOOK_INVALID error naming the path; the model is never called", async () => {
    const { model, harness, root } = await open([{ text: "never" }], {
      hooks: {
        beforeRequest: (request) => ({ ...request, settings: { when: new Date(0) } }) as never,
      },
    });
    try {
      const settled = await (await root.submit({ type: "input", content: "hi" })).wait();
      expect(settled.status).toBe("unanswered");
      expect(settled.reason).toBe("hook-failed");
      expect(settled.detail).toMatchObject({ name: "HookInvalid", code: "HOOK_INVALID" });
      expect((settled.detail as { message: string }).message).toMatch(
        /^the beforeRequest hook returned a request that is not JSON: request\.settings\.when/,
      );
      expect(model.requests).toHaveLength(0);
      expect(kinds(await root.entries())).toBe("durably.user");
    } finally {
      await harness.close();
    }
  });

  it("afterTool returning a malformed result: a HOOK_INVALID error; the run settles hook-failed", async () => {
    const { harness, root } = await open([callLookup, { text: "never" }], {
      hooks: { afterTool: () => ({ text: "oops" }) as never },
    });
    try {
      const settled = await (await root.submit({ type: "input", content: "find x" })).wait();
      expect(settled).toMatchObject({ reason: "hook-failed", detail: { code: "HOOK_INVALID" } });
      expect((settled.detail as { message: string }).message).toContain(
        'the afterTool hook returned {"text":"oops"}, not { content: string | parts, details?: JSON, isError?: boolean } (text is not a result field)',
      );
    } finally {
      await harness.close();
    }
  });
});

describe("hooks > a beforeTool verdict that is neither undefined nor { block }", () => {
  it("ends the run hook-failed with HOOK_INVALID naming what it returned; the tool never runs", async () => {
    const { ran, harness, root } = await open([callLookup, { text: "never" }], {
      hooks: { beforeTool: () => ({ stop: true }) as never },
    });
    try {
      const settled = await (await root.submit({ type: "input", content: "find x" })).wait();
      expect(settled).toMatchObject({
        reason: "hook-failed",
        detail: {
          code: "HOOK_INVALID",
          message: 'the beforeTool hook returned {"stop":true}, not undefined or { block: reason }',
        },
      });
      expect(ran).toEqual([]);
    } finally {
      await harness.close();
    }
  });
});

describe("hooks > bad hooks are refused before anything is stored", () => {
  it("rejects a hook that is not a function, an unknown hook name and an unknown hook set", async () => {
    const model = new ScriptedModel([]);
    await expect(
      Harness.open(new MemoryStorage(), {
        model,
        hooks: { beforeReqest: () => undefined } as never,
      }),
    ).rejects.toThrow(
      "Harness.open: hooks: beforeReqest is not a hook (beforeRequest, afterResponse, beforeTool, afterTool)",
    );
    await expect(
      Harness.open(new MemoryStorage(), { model, hookSets: { audit: { afterTool: 1 } } as never }),
    ).rejects.toThrow("Harness.open: hookSets.audit.afterTool must be a function");
    const harness = await Harness.open(new MemoryStorage(), {
      model,
      hookSets: { audit: {} },
    });
    try {
      const root = await harness.root();
      await expect(root.configure({ hooks: ["audti"] })).rejects.toThrow(
        'configure: hooks[0] "audti" is not one of the harness\'s hook sets ("audit")',
      );
      expect(await root.configuration()).toEqual({});
    } finally {
      await harness.close();
    }
  });
});
