import { afterEach, describe, expect, it, vi } from "vitest";
import {
  defineTool,
  Harness,
  ScriptedModel,
  Session,
  StorageClosed,
  type Batch,
  type CallOptions,
  type CommitResult,
  type ConversationId,
  type Seq,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";

/** A memory storage that counts its commit and close calls. */
class CountingStorage extends MemoryStorage {
  commits = 0;
  closes = 0;

  override commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult> {
    this.commits += 1;
    return super.commit(batches, receive, options);
  }

  override close(): Promise<void> {
    this.closes += 1;
    return super.close();
  }
}

const model = (): ScriptedModel =>
  new ScriptedModel([{ text: "a" }, { text: "b" }, { text: "c" }, { text: "d" }]);

/** A TypeError with exactly this message. */
async function refusedWith(promise: Promise<unknown>, message: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TypeError);
  expect((error as Error).message).toBe(message);
}

/** A tool that waits until released (each call its own gate) or aborted. */
function blockingTool() {
  const releases: (() => void)[] = [];
  const listeners: (() => void)[] = [];
  const tool = defineTool({
    name: "block",
    description: "Waits for the test",
    parameters: { type: "object" },
    replay: "safe",
    execute: async (_args, api) => {
      await new Promise<void>((resolve, reject) => {
        releases.push(resolve);
        for (const listener of listeners.splice(0)) listener();
        api.signal.addEventListener("abort", () => reject(api.signal.reason as Error), {
          once: true,
        });
      });
      return { content: "released" };
    },
  });
  const running = async (count: number): Promise<void> => {
    while (releases.length < count) await new Promise<void>((r) => listeners.push(r));
  };
  return { tool, releases, running };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("Harness.open checks every option before anything opens", () => {
  it.each([
    [{ concurrency: 0 }, "Harness.open: settings.concurrency: must be a positive integer, got 0"],
    [
      { concurrency: 1.5 },
      "Harness.open: settings.concurrency: must be a positive integer, got 1.5",
    ],
    [
      { concurrency: "4" },
      'Harness.open: settings.concurrency: must be a positive integer, got "4" (a string)',
    ],
    [
      { stopGraceMs: -5 },
      "Harness.open: settings.stopGraceMs: must be a non-negative number of milliseconds, got -5",
    ],
    [
      { stopGraceMs: Number.POSITIVE_INFINITY },
      "Harness.open: settings.stopGraceMs: must be a non-negative number of milliseconds, got Infinity",
    ],
    [
      { progress: { persistWithinMs: -1 } },
      "Harness.open: settings.progress.persistWithinMs: must be a non-negative number of milliseconds, got -1",
    ],
  ])(
    "settings %j: a TypeError naming the setting; nothing is stored and the storage stays usable",
    async (settings, message) => {
      const storage = new CountingStorage();
      await refusedWith(
        Harness.open(storage, { model: model(), settings: settings as never }),
        message,
      );
      expect(storage.commits).toBe(0);
      expect(storage.closes).toBe(0);
      // Nothing holds the storage: it opens again.
      const harness = await Harness.open(storage, { model: model() });
      await harness.close();
      expect(storage.closes).toBe(1);
    },
  );

  it.each([
    [
      { tool: [] },
      "Harness.open: tool is not an option (model, models, tools, instructions, hooks, hookSets, settings, clock, onError, signal)",
    ],
    [
      { instruction: "Be terse" },
      "Harness.open: instruction is not an option (model, models, tools, instructions, hooks, hookSets, settings, clock, onError, signal)",
    ],
    [
      { settings: { compation: { auto: false } } },
      "Harness.open: settings.compation is not a setting (progress, concurrency, stopGraceMs, model, retry, compaction, toolOutput)",
    ],
    [
      { settings: { stopGrace: 10 } },
      "Harness.open: settings.stopGrace is not a setting (progress, concurrency, stopGraceMs, model, retry, compaction, toolOutput)",
    ],
    [
      { settings: { progress: { persistWithin: 5 } } },
      "Harness.open: settings.progress.persistWithin is not a progress setting (persistWithinMs)",
    ],
    [
      { settings: 5 },
      "Harness.open: settings must be an object { progress, concurrency, stopGraceMs, model, retry, compaction, toolOutput }, got 5",
    ],
  ])("unknown option keys are refused: %j", async (options, message) => {
    const storage = new CountingStorage();
    await refusedWith(Harness.open(storage, { model: model(), ...(options as object) }), message);
    expect(storage.commits).toBe(0);
  });

  it("a failure after the session opened closes it (and its storage) before the error propagates", async () => {
    const storage = new CountingStorage();
    const boom = new Error("the scheduler could not start");
    vi.spyOn(Session.prototype, "onFailure").mockImplementationOnce(() => {
      throw boom;
    });
    await expect(Harness.open(storage, { model: model() })).rejects.toBe(boom);
    expect(storage.commits).toBe(1); // the root conversation, stored by Session.open
    expect(storage.closes).toBe(1);
    await expect(storage.conversation(1 as ConversationId)).rejects.toBeInstanceOf(StorageClosed);
  });
});

describe("unknown option keys of the conversation and harness calls", () => {
  it("compact, fork, usage and submissions refuse a key they do not know, storing nothing", async () => {
    const storage = new CountingStorage();
    const harness = await Harness.open(storage, { model: model() });
    try {
      const root = await harness.root();
      for (const q of ["q1", "q2", "q3"])
        await (await root.submit({ type: "input", content: q })).wait();
      const other = await harness.createConversation();
      await harness.whenIdle();
      const commits = storage.commits;
      const entries = (await root.entries()).length;
      await refusedWith(
        root.compact({ keepLast: 1 } as never),
        "compact: keepLast is not an option (keepLastTurns, signal)",
      );
      await refusedWith(
        root.fork({ atEntry: 4 } as never),
        "fork: atEntry is not an option (at, signal)",
      );
      await refusedWith(
        harness.usage({ conversation: other.id } as never),
        "usage: conversation is not an option (conversationId)",
      );
      await refusedWith(
        harness.usage(null as never),
        "usage: options must be an object { conversationId }, got null",
      );
      await refusedWith(
        root.submissions({ statuses: ["done"] } as never),
        "submissions: statuses is not an option (status, signal)",
      );
      expect(storage.commits).toBe(commits);
      expect((await root.entries()).length).toBe(entries);
      const conversations = await harness.session.read.scanConversations({}, 10);
      expect(conversations.items.map((c) => c.id)).toEqual([root.id, other.id]);
      // The right spellings still work.
      expect((await harness.usage({ conversationId: other.id })).total.requests).toBe(0);
      const fork = await root.fork({ at: (await root.entries())[1]?.id as never });
      expect((await fork.entries()).length).toBe(2);
    } finally {
      await harness.close();
    }
  });

  it("api.runConversation refuses a request field it does not know (the tool gets the TypeError)", async () => {
    const errors: unknown[] = [];
    const delegate = defineTool({
      name: "delegate",
      description: "Asks a helper",
      parameters: { type: "object" },
      replay: "safe",
      execute: async (_args, api) => {
        try {
          await api.runConversation({ input: "2+3?", agnet: { model: "default" } } as never);
          return { content: "ran" };
        } catch (error) {
          errors.push(error);
          return { content: (error as Error).message, isError: true };
        }
      },
    });
    const harness = await Harness.open(new MemoryStorage(), {
      model: new ScriptedModel([
        { toolCalls: [{ name: "delegate", arguments: {} }] },
        { text: "done" },
      ]),
      tools: [delegate],
    });
    try {
      const root = await harness.root();
      await (await root.submit({ type: "input", content: "go" })).wait();
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(TypeError);
      expect((errors[0] as Error).message).toBe(
        "api.runConversation: request.agnet is not a request field (agent, input)",
      );
      // No child conversation was created.
      const conversations = await harness.session.read.scanConversations({}, 10);
      expect(conversations.items).toHaveLength(1);
    } finally {
      await harness.close();
    }
  });
});

describe("conversation.stream({ until }) refuses a malformed until", () => {
  it.each([
    ["3", 'stream: until must be a submission or its id (a positive integer), got "3" (a string)'],
    [0, "stream: until must be a submission or its id (a positive integer), got 0"],
    [
      { submissionId: 3 },
      "stream: until must be a submission or its id, got an object whose id is undefined",
    ],
    [
      { id: "3" },
      'stream: until must be a submission or its id, got an object whose id is "3" (a string)',
    ],
    [null, "stream: until must be a submission or its id (a positive integer), got null"],
  ])("until %j is a TypeError, not an unbounded stream", async (until, message) => {
    const harness = await Harness.open(new MemoryStorage(), { model: model() });
    try {
      const root = await harness.root();
      await (await root.submit({ type: "input", content: "q" })).wait();
      await refusedWith(root.stream({ until: until as never }).next(), message);
    } finally {
      await harness.close();
    }
  });

  it("an unknown stream option is refused; a submission and its id still work", async () => {
    const harness = await Harness.open(new MemoryStorage(), { model: model() });
    try {
      const root = await harness.root();
      const asked = await root.submit({ type: "input", content: "q" });
      await asked.wait();
      await refusedWith(
        root.stream({ untill: asked.id } as never).next(),
        "stream: untill is not an option (signal, until)",
      );
      for (const until of [asked, asked.id]) {
        const types: string[] = [];
        for await (const event of root.stream({ until })) types.push(event.type);
        expect(types).toEqual(["text", "settled"]);
      }
    } finally {
      await harness.close();
    }
  });
});

describe("conversation.abort() counts every submission it aborts", () => {
  it("counts the inputs steered into the running answer that settle aborted with it", async () => {
    const { tool, releases, running } = blockingTool();
    const harness = await Harness.open(new MemoryStorage(), {
      model: new ScriptedModel([
        { toolCalls: [{ name: "block", arguments: {} }] },
        { toolCalls: [{ name: "block", arguments: {} }] },
        { text: "never" },
      ]),
      tools: [tool],
    });
    try {
      const root = await harness.root();
      const first = await root.submit({ type: "input", content: "go" });
      await running(1);
      const steered = await root.submit({ type: "input", content: "also", whenBusy: "steer" });
      releases[0]?.();
      await running(2); // the second round took the steered input, then called the tool again
      expect((await root.view()).live.run?.steered).toEqual([steered.id]);
      const queued = await root.submit({ type: "input", content: "later" });
      expect(await root.abort()).toBe(3);
      for (const s of [first, steered, queued])
        expect(await s.wait()).toMatchObject({ status: "unanswered", reason: "aborted" });
    } finally {
      await harness.close();
    }
  });
});

describe("clearer errors", () => {
  it("harness.conversation with an id that is not a positive integer is a TypeError naming what it got", async () => {
    const harness = await Harness.open(new MemoryStorage(), { model: model() });
    try {
      await refusedWith(
        harness.conversation("1" as never),
        'Harness.conversation: id must be a positive integer conversation id, got "1" (a string)',
      );
      await refusedWith(
        harness.conversation(0 as ConversationId),
        "Harness.conversation: id must be a positive integer conversation id, got 0",
      );
      expect((await harness.conversation(1 as ConversationId)).id).toBe(1);
    } finally {
      await harness.close();
    }
  });

  it("a requestId over the key limit is refused by submit and approve naming the call's field, storing nothing", async () => {
    const storage = new CountingStorage();
    const harness = await Harness.open(storage, { model: model() });
    try {
      const root = await harness.root();
      const commits = storage.commits;
      const long = "r".repeat(1023); // 1,025 bytes of JSON text with its quotes
      await refusedWith(
        root.submit({ type: "input", content: "q", requestId: long }),
        "submit: requestId: 1025 bytes of JSON text, over the limit of 1024 bytes",
      );
      await refusedWith(
        root.approve("call_1", { approved: true, requestId: long }),
        "approve: requestId: 1025 bytes of JSON text, over the limit of 1024 bytes",
      );
      expect(storage.commits).toBe(commits);
      const ok = await root.submit({ type: "input", content: "q", requestId: long.slice(1) });
      expect((await ok.wait()).status).toBe("done");
    } finally {
      await harness.close();
    }
  });

  it("watch names maxFrames (and refuses an unknown option)", async () => {
    const harness = await Harness.open(new MemoryStorage(), { model: model() });
    try {
      const root = await harness.root();
      expect(() => root.watch(() => undefined, { maxFrames: -1 })).toThrow(
        new TypeError("watch: maxFrames must be a positive integer, got -1"),
      );
      expect(() => root.watch(() => undefined, { maxFrame: 5 } as never)).toThrow(
        new TypeError("watch: maxFrame is not an option (maxFrames)"),
      );
      const stop = root.watch(() => undefined, { maxFrames: 5 });
      stop();
    } finally {
      await harness.close();
    }
  });

  it("a provider asking to wait longer than maxDelayMs: the detail gives both exactly", async () => {
    const harness = await Harness.open(new MemoryStorage(), {
      model: new ScriptedModel([
        {
          text: "ok",
          failures: [{ message: "429 rate limited", retryable: true, retryAfterMs: 1_600 }],
        },
      ]),
      settings: { retry: { initialDelayMs: 100, maxDelayMs: 1_500 } },
    });
    try {
      const root = await harness.root();
      const settled = await (await root.submit({ type: "input", content: "q" })).wait();
      expect(settled).toMatchObject({ status: "unanswered", reason: "model-error" });
      expect((settled.detail as { message: string }).message).toBe(
        "429 rate limited (the provider asked to wait 1600 ms before trying again, longer than settings.retry.maxDelayMs, 1500 ms, so it was not retried)",
      );
    } finally {
      await harness.close();
    }
  });
});
