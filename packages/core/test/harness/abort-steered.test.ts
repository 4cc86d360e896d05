import { describe, expect, it } from "vitest";
import {
  contentText,
  defineTool,
  Harness,
  ScriptedModel,
  type EntryRecord,
  type Message,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";

/**
 * "slow": each call runs until the test releases it (`release(n)`, n from 0)
 * or its signal aborts; `started(n)` resolves once call n runs.
 */
function slowTool() {
  const releases: (() => void)[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const tool = defineTool({
    name: "slow",
    description: "Runs until released",
    parameters: { type: "object" },
    replay: "safe",
    execute: async (_args, api) => {
      await new Promise<void>((resolve, reject) => {
        releases.push(resolve);
        api.signal.addEventListener("abort", () => reject(api.signal.reason as Error), {
          once: true,
        });
        for (const w of waiters.filter((w) => w.n < releases.length)) w.resolve();
      });
      return { content: "slow done" };
    },
  });
  return {
    tool,
    started: (n: number) =>
      new Promise<void>((resolve) =>
        n < releases.length ? resolve() : waiters.push({ n, resolve }),
      ),
    release: (n: number) => releases[n]?.(),
  };
}

const texts = (entries: readonly EntryRecord[]): string[] =>
  entries.flatMap((e) =>
    (e.model ?? []).map((m: Message) =>
      m.role === "assistant"
        ? `assistant:${m.content.map((p) => (p.type === "toolCall" ? `[${p.name}]` : p.text)).join("")}`
        : `${m.role}:${contentText(m.content)}`,
    ),
  );

describe("submission.abort() of a steered input the run has taken", () => {
  it("aborts the run that carries it: returns true, and the run's submission and the steered one settle unanswered (aborted); the next input is answered", async () => {
    const slow = slowTool();
    // Round 1 answers "go" with a call; round 2 (after the steered input) calls again and is
    // aborted; the request for "next" holds those two assistant messages, so it gets turn 3.
    const model = new ScriptedModel([
      { toolCalls: [{ name: "slow", arguments: {} }] },
      { toolCalls: [{ name: "slow", arguments: {} }] },
      { text: "answer to next" },
    ]);
    const harness = await Harness.open(new MemoryStorage(), { model, tools: [slow.tool] });
    try {
      const root = await harness.root();
      const first = await root.submit({ type: "input", content: "go" });
      await slow.started(0);
      const steer = await root.submit({ type: "input", content: "steer", whenBusy: "steer" });
      slow.release(0);
      await slow.started(1); // round 2 took the steered input and runs its call
      expect((await steer.status()).status).toBe("placed");
      expect((await root.view()).live.run).toMatchObject({
        submissionId: first.id,
        steered: [steer.id],
      });

      expect(await steer.abort()).toBe(true);
      expect(await steer.wait()).toMatchObject({ status: "unanswered", reason: "aborted" });
      expect(await first.wait()).toMatchObject({ status: "unanswered", reason: "aborted" });
      expect(await steer.abort()).toBe(false); // settled now
      expect(texts(await root.entries())).toEqual([
        "user:go",
        "assistant:[slow]",
        "toolResult:slow done",
        "user:steer",
        "assistant:[slow]",
        "toolResult:aborted: the tool call was aborted before it finished. No output was recorded.",
      ]);
      const view = await root.view();
      expect(view.live).toEqual({ run: null, generation: null, tools: {} });
      expect(view.inbox).toEqual({ queued: [] });

      const next = await root.submit({ type: "input", content: "next" });
      expect(await next.answerText()).toBe("answer to next");
    } finally {
      await harness.close();
    }
  });

  it("a steered input not yet taken is withdrawn alone: it settles at once and the run goes on", async () => {
    const slow = slowTool();
    const model = new ScriptedModel([
      { toolCalls: [{ name: "slow", arguments: {} }] },
      { text: "done" },
    ]);
    const harness = await Harness.open(new MemoryStorage(), { model, tools: [slow.tool] });
    try {
      const root = await harness.root();
      const first = await root.submit({ type: "input", content: "go" });
      await slow.started(0);
      const steer = await root.submit({ type: "input", content: "steer", whenBusy: "steer" });
      expect(await steer.abort()).toBe(true);
      expect(await steer.status()).toMatchObject({ status: "unanswered", reason: "aborted" });
      slow.release(0);
      expect(await first.answerText()).toBe("done");
      expect(texts(await root.entries())).toEqual([
        "user:go",
        "assistant:[slow]",
        "toolResult:slow done",
        "assistant:done",
      ]);
    } finally {
      await harness.close();
    }
  });
});
