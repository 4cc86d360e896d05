import { describe, expect, it } from "vitest";
import {
  contentText,
  ConversationBusy,
  Harness,
  ScriptedModel,
  type EntryRecord,
  type Message,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";
import { add, GatedModel, gateTool, text } from "./support/harness.js";

const texts = (entries: readonly EntryRecord[]): string[] =>
  entries.flatMap((e) =>
    (e.model ?? []).map((m: Message) =>
      m.role === "assistant"
        ? m.content.map((p) => (p.type === "toolCall" ? `call:${p.name}` : p.text)).join("")
        : m.role === "user"
          ? `user:${contentText(m.content)}`
          : `result:${contentText(m.content)}`,
    ),
  );

describe("Harness: submissions", () => {
  it("queues a follow-up while busy and places it when the answer settles", async () => {
    const model = new GatedModel((_r, i) => text(`answer ${i + 1}`));
    model.hold();
    const harness = await Harness.open(new MemoryStorage(), { model });
    const root = await harness.root();
    const first = await root.submit({ type: "input", content: "one" });
    const second = await root.submit({ type: "input", content: "two" });
    expect(first.submitted.status).toBe("placed");
    expect(second.submitted.status).toBe("queued");
    const view = await root.view();
    expect(view.inbox.queued).toEqual([{ submissionId: second.id, content: "two" }]);
    expect(view.live.run).toMatchObject({ submissionId: first.id });
    model.open();
    expect((await second.wait()).status).toBe("done");
    expect((await first.wait()).status).toBe("done");
    expect(texts(await root.entries())).toEqual(["user:one", "answer 1", "user:two", "answer 2"]);
    expect((await root.view()).inbox.queued).toEqual([]);
    await harness.close();
  });

  it('whenBusy: "reject" throws ConversationBusy and stores nothing', async () => {
    const model = new GatedModel(() => text("slow"));
    model.hold();
    const storage = new MemoryStorage();
    const harness = await Harness.open(storage, { model });
    const root = await harness.root();
    const first = await root.submit({ type: "input", content: "one" });
    await expect(
      root.submit({ type: "input", content: "two", whenBusy: "reject" }),
    ).rejects.toBeInstanceOf(ConversationBusy);
    const stored = await harness.session.read.scanSubmissions({ conversationId: root.id }, 10);
    expect(stored.items.map((s) => s.id)).toEqual([first.id]);
    expect((await root.view()).inbox.queued).toEqual([]);
    model.open();
    await first.wait();
    await harness.close();
  });

  it("a retried submit with the same requestId returns the existing submission", async () => {
    const harness = await Harness.open(new MemoryStorage(), {
      model: new ScriptedModel([{ text: "hi" }]),
    });
    const root = await harness.root();
    const a = await root.submit({ type: "input", content: "hello", requestId: "r1" });
    const b = await root.submit({ type: "input", content: "hello", requestId: "r1" });
    expect(b.id).toBe(a.id);
    await a.wait();
    const c = await root.submit({ type: "input", content: "hello", requestId: "r1" });
    expect(c.id).toBe(a.id);
    expect(c.submitted.status).toBe("done");
    await expect(root.submit({ type: "input", content: "other", requestId: "r1" })).rejects.toThrow(
      /requestId "r1" was used by submission \d+ with different content/,
    );
    expect((await root.entries()).filter((e) => e.kind === "durably.user")).toHaveLength(1);
    await harness.close();
  });

  it("checks the submit input, naming the field", async () => {
    const harness = await Harness.open(new MemoryStorage(), { model: new ScriptedModel([]) });
    const root = await harness.root();
    await expect(root.submit({ type: "note", content: "x" } as never)).rejects.toThrow(
      'submit: type must be "input" or "write", got "note"',
    );
    await expect(root.submit({ type: "write", content: "x" } as never)).rejects.toThrow(
      "submit: content is not a field of a write (type, entry, requestId, whenBusy)",
    );
    await expect(root.submit({ type: "input", content: 3 } as never)).rejects.toThrow(
      /submit: content: must be a string or an array of text and image parts/,
    );
    await expect(
      root.submit({ type: "input", content: "", whenBusy: "later" } as never),
    ).rejects.toThrow(/whenBusy/);
    await harness.close();
  });

  it("settles unanswered with model-error when the script is exhausted, and keeps going", async () => {
    const harness = await Harness.open(new MemoryStorage(), {
      model: new ScriptedModel([{ text: "only" }]),
    });
    const root = await harness.root();
    expect((await (await root.submit({ type: "input", content: "a" })).wait()).status).toBe("done");
    const second = await (await root.submit({ type: "input", content: "b" })).wait();
    expect(second).toMatchObject({ status: "unanswered", reason: "model-error" });
    expect((second.detail as { code?: string }).code).toBe("SCRIPT_EXHAUSTED");
    expect((await root.view()).live.run).toBeNull();
    await harness.close();
  });

  it("gives the model an error result for invalid arguments and an unknown tool", async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: "add", arguments: { a: 1 } },
          { name: "mul", arguments: { a: 1, b: 2 } },
        ],
      },
      { text: "sorry" },
    ]);
    const harness = await Harness.open(new MemoryStorage(), { model, tools: [add] });
    const root = await harness.root();
    expect((await (await root.submit({ type: "input", content: "go" })).wait()).status).toBe(
      "done",
    );
    const results = (await root.entries())
      .filter((e) => e.kind === "durably.tool-result")
      .map((e) => e.model?.[0]);
    expect(results).toEqual([
      expect.objectContaining({
        isError: true,
        content: 'error: invalid arguments for "add": arguments.b: required property is missing',
      }),
      expect.objectContaining({
        isError: true,
        content: 'error: unknown tool "mul" (available: "add")',
      }),
    ]);
    await harness.close();
  });

  it("submission.abort withdraws a queued input; conversation.abort stops a running tool", async () => {
    const gate = gateTool();
    const model = new ScriptedModel([
      { toolCalls: [{ name: "gate", arguments: {} }] },
      { text: "done" },
    ]);
    const harness = await Harness.open(new MemoryStorage(), { model, tools: [gate.tool] });
    const root = await harness.root();
    const running = await root.submit({ type: "input", content: "run the gate" });
    const queued = await root.submit({ type: "input", content: "later" });
    const another = await root.submit({ type: "input", content: "even later" });
    expect(await queued.abort()).toBe(true);
    expect(await queued.status()).toMatchObject({ status: "unanswered", reason: "aborted" });
    await gate.started;
    expect(await root.abort()).toBe(2); // the running answer and the remaining follow-up
    expect(await running.wait()).toMatchObject({ status: "unanswered", reason: "aborted" });
    expect(await another.wait()).toMatchObject({ status: "unanswered", reason: "aborted" });
    const entries = await root.entries();
    const result = entries.find((e) => e.kind === "durably.tool-result")?.model?.[0];
    expect(result).toMatchObject({ isError: true });
    expect((result as { content: string }).content).toMatch(
      /^aborted: .*Output so far:\ngate open; $/s,
    );
    const view = await root.view();
    expect(view.live).toEqual({ run: null, generation: null, tools: {} });
    expect(view.inbox.queued).toEqual([]);
    expect(await running.abort()).toBe(false);
    await harness.close();
  });

  it("aborting mid-stream keeps the partial text as an aborted assistant message", async () => {
    const model = new GatedModel(() => text("par", "tial", " never"));
    model.hold();
    model.allow(2);
    const harness = await Harness.open(new MemoryStorage(), { model });
    const root = await harness.root();
    const sub = await root.submit({ type: "input", content: "talk" });
    await model.emittedAtLeast(2);
    await sub.abort();
    expect(await sub.wait()).toMatchObject({ status: "unanswered", reason: "aborted" });
    const last = (await root.entries()).at(-1);
    expect(last?.kind).toBe("durably.assistant");
    expect(last?.model?.[0]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "partial" }],
      stopReason: "aborted",
    });
    await harness.close();
  });

  it("a fork sees the parent's transcript, starts idle and answers on its own", async () => {
    const model = new ScriptedModel([{ text: "first" }, { text: "in the fork" }]);
    const harness = await Harness.open(new MemoryStorage(), { model });
    const root = await harness.root();
    await (await root.submit({ type: "input", content: "a" })).wait();
    const fork = await root.fork();
    expect((await fork.entries()).map((e) => e.kind)).toEqual([
      "durably.user",
      "durably.assistant",
    ]);
    await (await fork.submit({ type: "input", content: "b" })).wait();
    expect(texts(await fork.entries())).toEqual(["user:a", "first", "user:b", "in the fork"]);
    expect(texts(await root.entries())).toEqual(["user:a", "first"]);
    await harness.close();
  });
});
