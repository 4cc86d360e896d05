import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY,
  Harness,
  retryDelay,
  ScriptedModel,
  type HarnessOptions,
  type LiveRetry,
  type Model,
  type ModelEvent,
  type ScriptedTurn,
  type TaskId,
  type TaskRecord,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";

const FAST = { initialDelayMs: 10, maxDelayMs: 2_000 };

async function run(
  model: Model,
  options: Partial<HarnessOptions> = {},
  onRetry?: (retry: LiveRetry, harness: Harness) => void,
) {
  const harness = await Harness.open(new MemoryStorage(), {
    model,
    settings: { retry: FAST },
    ...options,
  });
  const root = await harness.root();
  const retries: LiveRetry[] = [];
  root.watch((view) => {
    const retry = view.live.retry;
    if (retry && !retries.some((r) => r.attempt === retry.attempt)) {
      retries.push({ ...retry });
      onRetry?.(retry, harness);
    }
  });
  const submission = await root.submit({ type: "input", content: "q" });
  const settled = await submission.wait();
  await harness.whenIdle();
  const entries = await root.entries();
  const live = (await root.view()).live;
  await harness.close();
  return { settled, entries, live, retries };
}

const scripted = (turns: ScriptedTurn[]) => new ScriptedModel(turns, { chunkSize: 8 });

describe("durable retry", () => {
  it("a retryable error does not settle the run: it commits the wait, shows it, and the next attempt answers", async () => {
    const model = scripted([
      {
        text: "the answer",
        failures: [
          {
            message: "rate limited",
            code: "HTTP_429",
            retryable: true,
            kind: "transient",
            retryAfterMs: 120,
            text: "a partial that must not be kept",
          },
        ],
      },
    ]);
    const at: number[] = [];
    const original = model.stream.bind(model);
    model.stream = (request, options) => {
      at.push(Date.now());
      return original(request, options);
    };
    let stored: Promise<TaskRecord | undefined> | undefined;
    const { settled, entries, live, retries } = await run(model, {}, (retry, harness) => {
      stored ??= harness.session.read.task(retry.taskId as TaskId);
    });
    expect(settled.status).toBe("done");
    expect(entries.map((e) => e.kind)).toEqual(["durably.user", "durably.assistant"]);
    expect(JSON.stringify(entries)).not.toContain("must not be kept");
    expect(retries).toEqual([
      {
        taskId: expect.any(Number) as number,
        attempt: 2,
        maxAttempts: 5,
        retryAt: expect.any(Number) as number,
        error: { message: "rate limited", code: "HTTP_429", kind: "transient" },
      },
    ]);
    const task = await stored;
    expect(task?.state).toEqual({
      status: "running",
      checkpoint: {
        phase: "retry",
        round: 1,
        attempt: 2,
        retryAt: retries[0]?.retryAt,
        error: { message: "rate limited", code: "HTTP_429", kind: "transient" },
      },
    });
    expect((at[1] ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(115); // Retry-After honoured
    expect(live).toEqual({ run: null, generation: null, tools: {} });
  });

  it("gives up after maxAttempts and settles model-error with the last error and the attempts", async () => {
    const fail = (n: number) => ({
      message: `overloaded ${n}`,
      retryable: true,
      kind: "transient" as const,
    });
    const model = scripted([{ text: "never", failures: [fail(1), fail(2), fail(3)] }]);
    const { settled, retries } = await run(model, {
      settings: { retry: { ...FAST, maxAttempts: 3 } },
    });
    expect(settled).toMatchObject({
      status: "unanswered",
      reason: "model-error",
      detail: {
        name: "ModelError",
        message: "overloaded 3",
        kind: "transient",
        retryable: true,
        attempts: 3,
      },
    });
    expect(model.requests).toHaveLength(3);
    expect(retries.map((r) => `${r.attempt} of ${r.maxAttempts}`)).toEqual(["2 of 3", "3 of 3"]);
  });

  it("a non-retryable error settles at once, with the provider's message in the detail", async () => {
    const model = scripted([
      {
        text: "never",
        failures: [{ message: "model 'gpt-x' does not exist", kind: "invalid", code: "HTTP_404" }],
      },
    ]);
    const { settled, retries } = await run(model);
    expect(settled).toMatchObject({
      status: "unanswered",
      reason: "model-error",
      detail: {
        message: "model 'gpt-x' does not exist",
        code: "HTTP_404",
        kind: "invalid",
        attempts: 1,
      },
    });
    expect(model.requests).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it("an overflow is not retried", async () => {
    const model = scripted([
      { failures: [{ message: "maximum context length exceeded", kind: "overflow" }] },
    ]);
    const { settled } = await run(model);
    expect(settled).toMatchObject({ reason: "model-error", detail: { kind: "overflow" } });
    expect(model.requests).toHaveLength(1);
  });

  it("a thrown network error is retried like a retryable error event", async () => {
    const model = scripted([
      {
        text: "after the reset",
        failures: [{ message: "socket hang up", thrown: true, code: "ECONNRESET" }],
      },
    ]);
    const { settled, retries } = await run(model);
    expect(settled.status).toBe("done");
    expect(retries[0]?.error).toMatchObject({ code: "ECONNRESET", kind: "transient" });
  });

  it("a provider asking to wait longer than maxDelayMs is not retried, and the detail says why", async () => {
    const model = scripted([
      { failures: [{ message: "quota exhausted", retryable: true, retryAfterMs: 3_600_000 }] },
    ]);
    const { settled } = await run(model);
    expect(settled).toMatchObject({ status: "unanswered", reason: "model-error" });
    expect((settled.detail as { message: string }).message).toBe(
      "quota exhausted (the provider asked to wait 3600 s before trying again, longer than settings.retry.maxDelayMs, 2 s, so it was not retried)",
    );
  });

  it("counts attempts per round: each model call of a run gets maxAttempts", async () => {
    const busy = { message: "busy", retryable: true };
    const model = scripted([
      { toolCalls: [{ name: "missing", arguments: {} }], failures: [busy] },
      { text: "done", failures: [busy] },
    ]);
    const { settled } = await run(model, { settings: { retry: { ...FAST, maxAttempts: 2 } } });
    expect(settled.status).toBe("done");
    expect(model.requests).toHaveLength(4);
  });

  it("aborting during the wait settles aborted and clears the retry", async () => {
    const model = scripted([
      { failures: [{ message: "slow down", retryable: true, retryAfterMs: 1_500 }] },
    ]);
    const harness = await Harness.open(new MemoryStorage(), { model, settings: { retry: FAST } });
    try {
      const root = await harness.root();
      let waiting!: () => void;
      const shown = new Promise<void>((resolve) => (waiting = resolve));
      root.watch((view) => {
        if (view.live.retry) waiting();
      });
      const submission = await root.submit({ type: "input", content: "q" });
      await shown;
      const started = Date.now();
      expect(await submission.abort()).toBe(true);
      expect(await submission.wait()).toMatchObject({ status: "unanswered", reason: "aborted" });
      expect(Date.now() - started).toBeLessThan(1_000);
      expect((await root.view()).live).toEqual({ run: null, generation: null, tools: {} });
    } finally {
      await harness.close();
    }
  });

  it("checks settings.retry at open, naming the field", async () => {
    const open = (retry: unknown) =>
      Harness.open(new MemoryStorage(), {
        model: scripted([]),
        settings: { retry: retry as never },
      });
    await expect(open({ maxAttempts: 0 })).rejects.toThrow(
      "Harness.open: settings.retry.maxAttempts: must be an integer of at least 1",
    );
    // A field given as undefined takes its default (an optional value passed through).
    await (
      await open({ maxAttempts: 3, maxDelayMs: undefined, initialDelayMs: undefined })
    ).close();
    await expect(open({ initialDelayMs: -1 })).rejects.toThrow(/settings\.retry\.initialDelayMs/);
    await expect(open({ initialDelayMs: 5_000, maxDelayMs: 100 })).rejects.toThrow(
      /initialDelayMs \(5000\) is above maxDelayMs \(100\)/,
    );
    await expect(open({ attempts: 3 })).rejects.toThrow(
      /settings\.retry\.attempts: not a retry setting/,
    );
    // A name every object inherits is not a setting either (it was let through once).
    await expect(open({ toString: 3 })).rejects.toThrow(
      "settings.retry.toString: not a retry setting (maxAttempts, initialDelayMs, maxDelayMs)",
    );
  });
});

describe("retryDelay: exponential backoff with jitter", () => {
  const policy = { maxAttempts: 10, initialDelayMs: 100, maxDelayMs: 1_000 };

  it("doubles per attempt, capped, between half and all of the step", () => {
    for (const [next, step] of [
      [2, 100],
      [3, 200],
      [4, 400],
      [5, 800],
      [6, 1_000],
      [9, 1_000],
    ] as const) {
      expect(retryDelay(policy, next, undefined, () => 0)).toBe(step / 2);
      expect(retryDelay(policy, next, undefined, () => 1)).toBe(step);
      const d = retryDelay(policy, next, undefined) as number;
      expect(d).toBeGreaterThanOrEqual(step / 2);
      expect(d).toBeLessThanOrEqual(step);
    }
  });

  it("waits at least what the provider asked for, and refuses to wait longer than the cap", () => {
    expect(retryDelay(policy, 2, 700, () => 0)).toBe(700);
    expect(retryDelay(policy, 2, 1_000, () => 0)).toBe(1_000);
    expect(retryDelay(policy, 2, 1_001, () => 0)).toBeUndefined();
  });

  it("defaults to 5 attempts, 1 s first wait, 30 s cap", () => {
    expect(DEFAULT_RETRY).toEqual({ maxAttempts: 5, initialDelayMs: 1_000, maxDelayMs: 30_000 });
  });
});

describe("bad models settle the run with a clear reason, never a crash or a hang", () => {
  it("a model whose stream() throws synchronously", async () => {
    const model: Model = {
      stream() {
        throw new RangeError("no such endpoint configured");
      },
    };
    const { settled } = await run(model);
    expect(settled).toMatchObject({
      status: "unanswered",
      reason: "model-error",
      detail: {
        message: "the model threw RangeError: no such endpoint configured",
        retryable: false,
      },
    });
  });

  it("a stream that ends without done or error", async () => {
    const model: Model = {
      async *stream() {
        await Promise.resolve();
        yield { type: "text", delta: "and then" } satisfies ModelEvent;
      },
    };
    const { settled, entries } = await run(model);
    expect(settled).toMatchObject({
      status: "unanswered",
      reason: "model-error",
      detail: { code: "NO_END", message: "the model stream ended without a done or error event" },
    });
    // What streamed is kept as an error turn, never as the answer.
    expect(entries.at(-1)?.model?.[0]).toMatchObject({ role: "assistant", stopReason: "error" });
    expect(settled.answer).toBeUndefined();
  });
});
