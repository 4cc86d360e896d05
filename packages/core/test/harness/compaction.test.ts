import { describe, expect, it } from "vitest";
import {
  COMPACTION_ENTRY,
  ConversationBusy,
  defineDoc,
  Harness,
  planCompaction,
  ScriptedModel,
  SUMMARY_PREFIX,
  type ConversationId,
  type EntryId,
  type EntryRecord,
  type HarnessOptions,
  type Message,
  type Model,
  type ModelEvent,
  type ScriptedModelOptions,
  type ScriptedTurn,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";

const user = (content: string): Message => ({ role: "user", content });
const answer = (text: string): Message => ({
  role: "assistant",
  content: [{ type: "text", text }],
  stopReason: "stop",
});
const summary = (text: string): Message => user(`${SUMMARY_PREFIX}${text}`);

const turns = (...texts: string[]): ScriptedTurn[] => texts.map((text) => ({ text }));

async function open(
  scripted: ScriptedTurn[],
  options: ScriptedModelOptions & { harness?: Partial<HarnessOptions> } = {},
) {
  const { harness: extra, ...modelOptions } = options;
  const model = new ScriptedModel(scripted, { summary: "S", ...modelOptions });
  const harness = await Harness.open(new MemoryStorage(), { model, ...extra });
  return { model, harness, root: await harness.root() };
}

async function ask(root: Awaited<ReturnType<typeof open>>["root"], ...questions: string[]) {
  for (const q of questions) await (await root.submit({ type: "input", content: q })).wait();
}

const kinds = (entries: readonly EntryRecord[]) =>
  entries.map((e) => e.kind.replace("durably.", ""));

describe("planCompaction", () => {
  const C = 1 as ConversationId;
  const e = (id: number, model: Message, head?: number): EntryRecord => ({
    id: id as EntryId,
    conversationId: C,
    kind: head === undefined ? "x" : COMPACTION_ENTRY,
    model: [model],
    ...(head !== undefined ? { head: head as EntryId } : {}),
  });

  it("keeps the last turns and summarises what the model saw before them, an earlier summary first", () => {
    const entries = [
      e(2, user("q1")),
      e(3, answer("a1")),
      e(4, summary("old")),
      e(5, user("q2")),
      e(6, answer("a2")),
      e(7, user("q3")),
    ];
    // A marker at 4 keeping from 2... is superseded; here it keeps from 2 (everything).
    const marked = entries.map((x) => (x.id === 4 ? { ...x, head: 2 as EntryId } : x));
    const plan = planCompaction(marked, { keepLastTurns: 1 });
    expect(plan?.firstKept).toBe(7);
    expect(plan?.summarized).toEqual([
      summary("old"),
      user("q1"),
      answer("a1"),
      user("q2"),
      answer("a2"),
    ]);
    expect(planCompaction(marked, { keepLastTurns: 3 })).toBeUndefined();
    expect(planCompaction(marked, { firstKept: 5 as EntryId })?.summarized).toEqual([
      summary("old"),
      user("q1"),
      answer("a1"),
    ]);
    expect(planCompaction(marked, { firstKept: 6 as EntryId })).toBeUndefined(); // not a turn start
  });
});

describe("compaction", () => {
  it("compact() stores one marker: the model then sees the summary, the kept turns, and what follows", async () => {
    const { model, harness, root } = await open(turns("a1", "a2", "a3", "a4"));
    try {
      await ask(root, "q1", "q2", "q3");
      const result = await root.compact({ keepLastTurns: 1 });
      const entries = await root.entries();
      expect(kinds(entries)).toEqual([
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "compaction",
      ]);
      const marker = entries[6] as EntryRecord;
      expect(result).toEqual({
        status: "compacted",
        entryId: marker.id,
        firstKept: entries[4]?.id,
      });
      expect(marker.head).toBe(entries[4]?.id);
      expect(marker.model).toEqual([summary("S")]);
      expect(marker.data).toMatchObject({
        summary: "S",
        reason: "manual",
        model: "default",
        summarizedEntries: 4,
      });
      // The summary request: the conversation before q3 as a transcript, no tools.
      const asked = model.requests[3];
      expect(asked?.purpose).toBe("compaction");
      expect(asked?.tools).toEqual([]);
      const transcript = asked?.messages[0]?.content as string;
      expect(transcript).toContain(
        "[user]: q1\n\n[assistant]: a1\n\n[user]: q2\n\n[assistant]: a2",
      );
      expect(transcript).not.toContain("q3");
      await ask(root, "q4");
      expect(model.requests[4]?.messages).toEqual([
        summary("S"),
        user("q3"),
        answer("a3"),
        user("q4"),
      ]);
      // The whole transcript is still there.
      expect(kinds(await root.entries())).toHaveLength(9);
      // The summary call is in the ledger.
      expect((await root.usage()).total.requests).toBe(5);
    } finally {
      await harness.close();
    }
  });

  it("a second compaction folds the first summary into the new one and supersedes it", async () => {
    const { model, harness, root } = await open(turns("a1", "a2", "a3", "a4", "a5"));
    try {
      await ask(root, "q1", "q2");
      await root.compact({ keepLastTurns: 1 });
      await ask(root, "q3");
      await root.compact({ keepLastTurns: 1 });
      const second = model.requests.filter((r) => r.purpose === "compaction")[1];
      expect(second?.messages[0]?.content).toContain(`[user]: ${SUMMARY_PREFIX}S\n\n[user]: q2`);
      await ask(root, "q4");
      expect(model.requests.at(-1)?.messages).toEqual([
        summary("S"),
        user("q3"),
        expect.anything(),
        user("q4"),
      ]);
    } finally {
      await harness.close();
    }
  });

  it("skips when there are not more turns than it keeps, and refuses keepLastTurns below 1", async () => {
    const { model, harness, root } = await open(turns("a1"));
    try {
      await ask(root, "q1");
      expect(await root.compact({ keepLastTurns: 1 })).toEqual({
        status: "skipped",
        reason: "nothing to compact: the conversation has no more turns than it keeps",
      });
      expect(model.requests.filter((r) => r.purpose === "compaction")).toHaveLength(0);
      await expect(root.compact({ keepLastTurns: 0 })).rejects.toThrow(
        /compact: keepLastTurns: must be an integer of at least 1/,
      );
      expect((await root.view()).live.compaction).toBeUndefined();
    } finally {
      await harness.close();
    }
  });

  it("compacts automatically when the last request's input passed contextWindow × threshold", async () => {
    const model = new ScriptedModel(
      [
        { text: "a1", usage: { inputTokens: 10, outputTokens: 1 } },
        { text: "a2", usage: { inputTokens: 60, outputTokens: 1 } },
      ],
      { summary: "S" },
    );
    const harness = await Harness.open(new MemoryStorage(), {
      models: { default: { model, contextWindow: 100, compactAt: 0.5 } },
      settings: { compaction: { keepLastTurns: 1 } },
    });
    try {
      const root = await harness.root();
      await ask(root, "q1", "q2"); // q2's request: 10 tokens last time, under 50: no compaction
      expect(model.requests.map((r) => r.purpose ?? "answer")).toEqual(["answer", "answer"]);
      const third = await root.submit({ type: "input", content: "q3" }); // 60 > 50: compact first
      expect(await third.answerText()).toBe("a1");
      expect(model.requests.map((r) => r.purpose ?? "answer")).toEqual([
        "answer",
        "answer",
        "compaction",
        "answer",
      ]);
      expect(model.requests[3]?.messages).toEqual([summary("S"), user("q3")]);
      const entries = await root.entries();
      expect(kinds(entries)).toEqual([
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "compaction",
        "assistant",
      ]);
      expect(entries[5]?.data).toMatchObject({ reason: "threshold" });
      // The request after the compaction was small: the next one does not compact again.
      await ask(root, "q4");
      expect(model.requests.filter((r) => r.purpose === "compaction")).toHaveLength(1);
    } finally {
      await harness.close();
    }
  });

  it("an overflow compacts once, then calls the model again", async () => {
    const { model, harness, root } = await open(
      [
        { text: "a1" },
        { text: "a2" },
        { text: "never", failures: [{ message: "prompt is too long", kind: "overflow" }] },
      ],
      { harness: { settings: { compaction: { keepLastTurns: 1 } } } },
    );
    try {
      await ask(root, "q1", "q2");
      const settled = await (await root.submit({ type: "input", content: "q3" })).wait();
      expect(settled.status).toBe("done");
      expect(model.requests.map((r) => r.purpose ?? "answer")).toEqual([
        "answer",
        "answer",
        "answer",
        "compaction",
        "answer",
      ]);
      expect(model.requests[4]?.messages).toEqual([summary("S"), user("q3")]);
      expect((await root.entries()).find((e) => e.kind === COMPACTION_ENTRY)?.data).toMatchObject({
        reason: "overflow",
      });
    } finally {
      await harness.close();
    }
  });

  it("with automatic compaction off, an overflow ends the run at once", async () => {
    const { model, harness, root } = await open(
      [{ text: "a1" }, { failures: [{ message: "too long", kind: "overflow" }] }],
      { harness: { settings: { compaction: { auto: false } } } },
    );
    try {
      await ask(root, "q1");
      const settled = await (await root.submit({ type: "input", content: "q2" })).wait();
      expect(settled).toMatchObject({
        status: "unanswered",
        reason: "model-error",
        detail: { kind: "overflow" },
      });
      expect(model.requests).toHaveLength(2);
    } finally {
      await harness.close();
    }
  });

  it("retries a summary call that failed retryably; a final failure leaves the context as it was", async () => {
    const quick = { retry: { initialDelayMs: 5, maxDelayMs: 50, maxAttempts: 2 } };
    const flaky = await open(turns("a1", "a2", "a3"), {
      summaryFailures: [{ message: "busy", retryable: true }],
      harness: { settings: quick },
    });
    try {
      await ask(flaky.root, "q1", "q2");
      expect((await flaky.root.compact({ keepLastTurns: 1 })).status).toBe("compacted");
      expect(flaky.model.requests.filter((r) => r.purpose === "compaction")).toHaveLength(2);
    } finally {
      await flaky.harness.close();
    }
    const broken = await open(turns("a1", "a2", "a3"), {
      summaryFailures: [{ message: "no", kind: "invalid" }],
      harness: { settings: quick },
    });
    try {
      await ask(broken.root, "q1", "q2");
      expect(await broken.root.compact({ keepLastTurns: 1 })).toMatchObject({
        status: "failed",
        error: { message: "the summary call failed: no" },
      });
      expect((await broken.root.entries()).some((e) => e.kind === COMPACTION_ENTRY)).toBe(false);
      await ask(broken.root, "q3");
      expect(broken.model.requests.at(-1)?.messages).toHaveLength(5);
    } finally {
      await broken.harness.close();
    }
  });

  it("holds the conversation while it runs: inputs queue behind it, and compact() refuses a busy conversation", async () => {
    const { model, harness, root } = await open(turns("a1", "a2", "a3", "a4"), {
      summary: "a long summary ".repeat(10),
      chunkSize: 1,
      chunkDelayMs: 2,
    });
    try {
      await ask(root, "q1", "q2");
      let shown = "";
      root.watch((view) => {
        if (view.live.compaction) shown = view.live.compaction.text;
      });
      const compacting = root.compact({ keepLastTurns: 1 });
      while (shown === "") await new Promise((r) => setTimeout(r, 2));
      expect((await root.view()).live.compaction).toMatchObject({ reason: "manual" });
      const queued = await root.submit({ type: "input", content: "q3" });
      expect(queued.submitted.status).toBe("queued");
      await expect(root.compact()).rejects.toThrow(ConversationBusy);
      await expect(
        root.submit({ type: "input", content: "x", whenBusy: "reject" }),
      ).rejects.toThrow(/is compacting/);
      expect((await compacting).status).toBe("compacted");
      expect((await queued.wait()).status).toBe("done");
      expect(model.requests.at(-1)?.messages[0]).toEqual(
        summary("a long summary ".repeat(10).trim()),
      );
      expect((await root.view()).live).toEqual({ run: null, generation: null, tools: {} });
    } finally {
      await harness.close();
    }
  });

  it("conversation.abort() stops a manual compaction: no marker, the conversation is idle", async () => {
    const { harness, root } = await open(turns("a1", "a2"), {
      chunkSize: 1,
      chunkDelayMs: 5,
      summary: "x".repeat(200),
    });
    try {
      await ask(root, "q1", "q2");
      const compacting = root.compact({ keepLastTurns: 1 });
      while (!(await root.view()).live.compaction?.text) await new Promise((r) => setTimeout(r, 2));
      await root.abort();
      expect(await compacting).toMatchObject({ status: "aborted" });
      expect((await root.entries()).some((e) => e.kind === COMPACTION_ENTRY)).toBe(false);
      expect((await root.view()).live.compaction).toBeUndefined();
    } finally {
      await harness.close();
    }
  });

  it("forks and snapshotAsOf still work across a compaction", async () => {
    const Notes = defineDoc<{ text: string }, "conversation">({
      kind: "app.notes",
      version: 1,
      scope: "conversation",
      history: "rewindable",
      fork: "asOf",
      initial: () => ({ text: "" }),
    });
    const { model, harness, root } = await open(turns("a1", "a2", "a3", "a4", "a5"));
    try {
      await ask(root, "q1");
      const note = await harness.session.commit(async (tx) => {
        (await tx.doc(Notes, root.id)).text = "before";
        return tx.appendEntry(root.id, { kind: "app.note", data: { n: 1 } });
      });
      await ask(root, "q2");
      await root.compact({ keepLastTurns: 1 });
      await harness.session.commit(async (tx) => {
        (await tx.doc(Notes, root.id)).text = "after";
      });
      expect(await harness.session.snapshotAsOf(Notes, root.id, note.id)).toEqual({
        text: "before",
      });
      const entries = await root.entries();
      expect(kinds(entries)).toEqual([
        "user",
        "assistant",
        "app.note",
        "user",
        "assistant",
        "compaction",
      ]);
      // A fork at an entry before the marker sees the conversation as it was, uncompacted.
      const early = await root.fork({ at: entries[4]?.id as EntryId });
      await ask(early, "from the early fork");
      expect(model.requests.at(-1)?.messages).toEqual([
        user("q1"),
        answer("a1"),
        user("q2"),
        expect.objectContaining({ role: "assistant" }),
        user("from the early fork"),
      ]);
      expect(await harness.session.snapshot(Notes, early.id)).toEqual({ text: "before" });
      // A fork after it sees the compacted context.
      const late = await root.fork();
      await ask(late, "from the late fork");
      expect(model.requests.at(-1)?.messages).toEqual([
        summary("S"),
        user("q2"),
        expect.objectContaining({ role: "assistant" }),
        user("from the late fork"),
      ]);
    } finally {
      await harness.close();
    }
  });

  it("a summary cut short (stop reason length) or calling a tool is no summary: the compaction fails, its usage is counted", async () => {
    const answers = new ScriptedModel(turns("a1", "a2", "a3"));
    let mode: "length" | "tool" = "length";
    const model: Model = {
      async *stream(request, options) {
        if (request.purpose !== "compaction") {
          yield* answers.stream(request, options);
          return;
        }
        yield { type: "text", delta: "The user asked" };
        if (mode === "tool")
          yield { type: "toolCall", id: "x", name: "search", arguments: {} } satisfies ModelEvent;
        yield {
          type: "done",
          stopReason: mode === "length" ? "length" : "toolUse",
          usage: { inputTokens: 500, outputTokens: 3 },
        } satisfies ModelEvent;
      },
    };
    const harness = await Harness.open(new MemoryStorage(), { model });
    try {
      const root = await harness.root();
      await ask(root, "q1", "q2");
      expect(await root.compact({ keepLastTurns: 1 })).toMatchObject({
        status: "failed",
        error: { message: 'the summary ended with stop reason "length", so it may be incomplete' },
      });
      mode = "tool";
      expect(await root.compact({ keepLastTurns: 1 })).toMatchObject({
        status: "failed",
        error: { message: "the model called a tool instead of summarising" },
      });
      expect((await root.entries()).some((e) => e.kind === COMPACTION_ENTRY)).toBe(false);
      const { total } = await root.usage();
      expect(total.requests).toBe(4); // two answers, two summary calls
      expect(total.inputTokens).toBeGreaterThanOrEqual(1_000);
    } finally {
      await harness.close();
    }
  });
});
