import { describe, expect, it } from "vitest";
import {
  costOf,
  Harness,
  ScriptedModel,
  type ModelUsage,
  type StorageWrite,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";

const usage = (inputTokens: number, outputTokens: number, more: Partial<ModelUsage> = {}) => ({
  inputTokens,
  outputTokens,
  ...more,
});

describe("usage ledger", () => {
  it("adds each answer's usage to durably.usage in the commit that stores its assistant entry", async () => {
    const model = new ScriptedModel([
      { text: "one", usage: usage(100, 10, { cachedInputTokens: 40, reasoningTokens: 3 }) },
    ]);
    const harness = await Harness.open(new MemoryStorage(), { model });
    const commits: StorageWrite[][] = [];
    harness.session.subscribeCommits((event) => commits.push([...event.writes]));
    try {
      const root = await harness.root();
      await (await root.submit({ type: "input", content: "q" })).wait();
      const withAnswer = commits.filter((writes) =>
        writes.some((w) => w.type === "entry" && w.value.kind === "durably.assistant"),
      );
      expect(withAnswer).toHaveLength(1);
      // The first call creates the ledger, in that same commit.
      const ledger = (withAnswer[0] ?? []).filter(
        (w) => w.type === "document.create" && w.record.kind === "durably.usage",
      );
      expect(ledger).toHaveLength(1);
      const totals = {
        requests: 1,
        inputTokens: 100,
        outputTokens: 10,
        cachedInputTokens: 40,
        reasoningTokens: 3,
        unpriced: 1,
      };
      expect(await harness.usage()).toEqual({ total: totals, models: { default: totals } });
      expect(await harness.usage({ conversationId: root.id })).toEqual({
        total: totals,
        models: { default: totals },
      });
    } finally {
      await harness.close();
    }
  });

  it("keeps totals per conversation and per model, with the cost of models that declare prices", async () => {
    const cheap = new ScriptedModel([
      { text: "a", usage: usage(1_000, 100) },
      { text: "b", usage: usage(2_000, 200, { cachedInputTokens: 1_000 }) },
    ]);
    const plain = new ScriptedModel([{ text: "c", usage: usage(50, 5) }]);
    const harness = await Harness.open(new MemoryStorage(), {
      models: {
        default: {
          model: cheap,
          prices: { inputPerMillion: 2, outputPerMillion: 10, cachedInputPerMillion: 0.5 },
        },
        plain,
      },
    });
    try {
      const root = await harness.root();
      const other = await harness.createConversation();
      await (await root.submit({ type: "input", content: "1" })).wait();
      await (await root.submit({ type: "input", content: "2" })).wait();
      await (await other.submit({ type: "input", content: "3", model: "plain" })).wait();
      // 1,000 in + 100 out; then 1,000 fresh + 1,000 cached in + 200 out.
      const first = (1_000 * 2 + 100 * 10) / 1e6;
      const second = (1_000 * 2 + 1_000 * 0.5 + 200 * 10) / 1e6;
      const rootReport = await root.usage();
      expect(rootReport.total).toMatchObject({
        requests: 2,
        inputTokens: 3_000,
        outputTokens: 300,
      });
      expect(rootReport.total.cost).toBeCloseTo(first + second, 12);
      expect(rootReport.total.unpriced).toBeUndefined();
      expect(Object.keys(rootReport.models)).toEqual(["default"]);
      const otherReport = await harness.usage({ conversationId: other.id });
      expect(otherReport).toEqual({
        total: {
          requests: 1,
          inputTokens: 50,
          outputTokens: 5,
          cachedInputTokens: 0,
          reasoningTokens: 0,
          unpriced: 1,
        },
        models: {
          plain: {
            requests: 1,
            inputTokens: 50,
            outputTokens: 5,
            cachedInputTokens: 0,
            reasoningTokens: 0,
            unpriced: 1,
          },
        },
      });
      const all = await harness.usage();
      expect(all.total.requests).toBe(3);
      expect(all.total.cost).toBeCloseTo(first + second, 12);
      expect(all.total.unpriced).toBe(1);
      expect(Object.keys(all.models).sort()).toEqual(["default", "plain"]);
      // Each answer carries its own usage and cost.
      const answers = (await root.entries()).filter((e) => e.kind === "durably.assistant");
      expect(answers.map((e) => (e.data as { usage: { cost?: number } }).usage.cost)).toEqual([
        first,
        second,
      ]);
      expect((await root.view()).usage).toEqual(rootReport);
    } finally {
      await harness.close();
    }
  });

  it("a conversation that made no call reports zeros", async () => {
    const harness = await Harness.open(new MemoryStorage(), { model: new ScriptedModel([]) });
    try {
      const c = await harness.createConversation();
      expect(await harness.usage({ conversationId: c.id })).toEqual({
        total: {
          requests: 0,
          inputTokens: 0,
          outputTokens: 0,
          cachedInputTokens: 0,
          reasoningTokens: 0,
        },
        models: {},
      });
      await expect(harness.usage({ conversationId: 0 as never })).rejects.toThrow(
        /usage: conversationId must be a positive integer/,
      );
    } finally {
      await harness.close();
    }
  });

  it("costOf prices fresh and cached input apart, and is undefined without prices", () => {
    expect(costOf(usage(1_000_000, 0), { inputPerMillion: 3, outputPerMillion: 15 })).toBe(3);
    expect(
      costOf(usage(1_000_000, 500_000, { cachedInputTokens: 600_000 }), {
        inputPerMillion: 3,
        outputPerMillion: 15,
        cachedInputPerMillion: 0.3,
      }),
    ).toBeCloseTo(0.4 * 3 + 0.6 * 0.3 + 0.5 * 15, 12);
    expect(costOf(usage(10, 10), undefined)).toBeUndefined();
  });

  it("refuses bad prices and context windows at open, naming the field", async () => {
    const model = new ScriptedModel([]);
    await expect(
      Harness.open(new MemoryStorage(), {
        models: { default: { model, prices: { inputPerMillion: -1, outputPerMillion: 1 } } },
      }),
    ).rejects.toThrow(
      /options\.models\.default\.prices\.inputPerMillion: must be a non-negative number/,
    );
    await expect(
      Harness.open(new MemoryStorage(), { models: { default: { model, contextWindow: 0 } } }),
    ).rejects.toThrow(/options\.models\.default\.contextWindow: must be a positive integer/);
    await expect(
      Harness.open(new MemoryStorage(), { models: { default: { model, compactAt: 1.5 } } }),
    ).rejects.toThrow(/options\.models\.default\.compactAt: must be a fraction/);
  });
});
