import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { startOpenAiTestServer, type OpenAiTestServer } from "@durably/contract-tests";
import { contentText, defineTool, Harness } from "@durably/core";
import { openJsonlStorage } from "@durably/storage-jsonl";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { aiSdkModel } from "../src/index.js";

const API_KEY = "sk-durably-harness-fedcba9876543210";

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

let server: OpenAiTestServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  server = undefined;
  dir = undefined;
});

/** Every byte the backend wrote, as text. */
function storedBytes(directory: string): string {
  return readdirSync(directory)
    .map((name) => readFileSync(join(directory, name), "utf8"))
    .join("\n");
}

describe("a Harness running a real provider through aiSdkModel over HTTP", () => {
  it("answers with a tool call, stores usage, and stores no credential anywhere", async () => {
    server = await startOpenAiTestServer({
      turns: [
        {
          reasoning: "I should add",
          text: "Let me add. ",
          toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }],
          usage: { inputTokens: 50, outputTokens: 10, cachedInputTokens: 32 },
        },
        { text: "2 + 3 = 5" },
      ],
    });
    dir = mkdtempSync(join(tmpdir(), "durably-ai-sdk-"));
    const provider = createOpenAICompatible({
      name: "local",
      baseURL: server.url,
      apiKey: API_KEY,
      includeUsage: true,
    });
    const harness = await Harness.open(await openJsonlStorage(dir), {
      model: aiSdkModel(provider.chatModel("scripted"), { redact: [API_KEY] }),
      tools: [add],
    });
    let frames = 0;
    try {
      const root = await harness.root();
      const seen: string[] = [];
      root.watch((view) => {
        frames++;
        seen.push(view.live.generation?.text ?? "");
      });
      const settled = await (await root.submit({ type: "input", content: "What is 2+3?" })).wait();
      expect(settled.status).toBe("done");
      const entries = await root.entries();
      expect(entries.map((e) => e.kind)).toEqual([
        "durably.user",
        "durably.assistant",
        "durably.tool-result",
        "durably.assistant",
      ]);
      expect(entries[1]?.model?.[0]).toEqual({
        role: "assistant",
        content: [
          { type: "reasoning", text: "I should add" },
          { type: "text", text: "Let me add. " },
          { type: "toolCall", id: "call_1_1", name: "add", arguments: { a: 2, b: 3 } },
        ],
        stopReason: "toolUse",
      });
      // openai-compatible reports 0 reasoning tokens when the server names none.
      expect(entries[1]?.data).toEqual({
        model: "default",
        usage: { inputTokens: 50, outputTokens: 10, cachedInputTokens: 32, reasoningTokens: 0 },
      });
      const answer = entries[3]?.model?.[0];
      expect(answer?.role === "assistant" && answer.content).toEqual([
        { type: "text", text: "2 + 3 = 5" },
      ]);
      // The second request carried the call and its result, in OpenAI's wire format.
      const second = server.requests[1]?.body.messages ?? [];
      expect(second.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
      expect(contentText((entries[2]?.model?.[0] as { content: string }).content)).toBe("5");
      expect(server.requests.every((r) => r.headers.authorization === `Bearer ${API_KEY}`)).toBe(
        true,
      );
    } finally {
      await harness.close();
    }
    expect(frames).toBeGreaterThan(1);
    const bytes = storedBytes(dir);
    expect(bytes).toContain("2 + 3 = 5");
    expect(bytes).not.toContain(API_KEY);
    expect(bytes.toLowerCase()).not.toContain("authorization");
  });

  it("with prices declared in aiSdkModel's options, every call's cost goes into the usage ledger", async () => {
    server = await startOpenAiTestServer({
      turns: [
        { text: "one", usage: { inputTokens: 1_000, outputTokens: 100, cachedInputTokens: 400 } },
        { text: "two", usage: { inputTokens: 2_000, outputTokens: 50 } },
      ],
    });
    dir = mkdtempSync(join(tmpdir(), "durably-ai-sdk-"));
    const provider = createOpenAICompatible({
      name: "local",
      baseURL: server.url,
      includeUsage: true,
    });
    const prices = { inputPerMillion: 2.5, outputPerMillion: 10, cachedInputPerMillion: 1.25 };
    const model = aiSdkModel(provider.chatModel("scripted"), { prices, contextWindow: 128_000 });
    expect(model.prices).toEqual(prices);
    expect(model.contextWindow).toBe(128_000);
    const harness = await Harness.open(await openJsonlStorage(dir), { model });
    try {
      const root = await harness.root();
      await (await root.submit({ type: "input", content: "a" })).wait();
      await (await root.submit({ type: "input", content: "b" })).wait();
      const first = (600 * 2.5 + 400 * 1.25 + 100 * 10) / 1e6;
      const second = (2_000 * 2.5 + 50 * 10) / 1e6;
      const { total, models } = await harness.usage();
      expect(total).toMatchObject({
        requests: 2,
        inputTokens: 3_000,
        outputTokens: 150,
        cachedInputTokens: 400,
      });
      expect(total.cost).toBeCloseTo(first + second, 12);
      expect(Object.keys(models)).toEqual(["default"]);
      const costs = (await root.entries())
        .filter((e) => e.kind === "durably.assistant")
        .map((e) => (e.data as { usage: { cost: number } }).usage.cost);
      expect(costs[0]).toBeCloseTo(first, 12);
      expect(costs[1]).toBeCloseTo(second, 12);
    } finally {
      await harness.close();
    }
  });

  it("refuses bad prices or a bad context window, naming the field", () => {
    const fake = {
      specificationVersion: "v3",
      provider: "x",
      modelId: "y",
      doStream: () => undefined,
    } as never;
    expect(() => aiSdkModel(fake, { prices: { inputPerMillion: 1 } as never })).toThrow(
      /aiSdkModel: options\.prices\.outputPerMillion must be a non-negative number/,
    );
    expect(() =>
      aiSdkModel(fake, { prices: { inputPerMillion: 1, outputPerMillion: 1, per: 1 } as never }),
    ).toThrow(/options\.prices\.per is not a price/);
    expect(() => aiSdkModel(fake, { contextWindow: 1.5 })).toThrow(
      /aiSdkModel: options\.contextWindow must be a positive integer/,
    );
  });
});
