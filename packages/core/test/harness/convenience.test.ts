import { describe, expect, it } from "vitest";
import {
  defineTool,
  Harness,
  ScriptedModel,
  SubmissionUnanswered,
  type ConversationEvent,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";
import { GatedModel, text } from "./support/harness.js";

const counter = defineTool({
  name: "count",
  description: "Counts to three, streaming",
  parameters: { type: "object" },
  replay: "safe",
  execute: async (_args, api) => {
    for (const n of ["one ", "two ", "three"]) await api.output(n);
    return { content: "counted", details: { to: 3 } };
  },
});

describe("submission.answerText", () => {
  it("resolves with the answer's text, or rejects SubmissionUnanswered carrying the record", async () => {
    const model = new ScriptedModel([
      { reasoning: "hmm", text: "four" },
      { error: { message: "refused", kind: "invalid" } },
    ]);
    const harness = await Harness.open(new MemoryStorage(), { model });
    try {
      const root = await harness.root();
      expect(await (await root.submit({ type: "input", content: "2+2" })).answerText()).toBe(
        "four",
      );
      const failing = await root.submit({ type: "input", content: "again" });
      const error = await failing.answerText().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SubmissionUnanswered);
      expect(error).toMatchObject({
        code: "SUBMISSION_UNANSWERED",
        message: `submission ${failing.id} was not answered: model-error (refused)`,
        record: { status: "unanswered", reason: "model-error" },
      });
    } finally {
      await harness.close();
    }
  });
});

describe("conversation.submissions", () => {
  it("lists submissions oldest first, filtered by status", async () => {
    const model = new GatedModel((_r, i) => text(`answer ${i}`));
    model.hold();
    const harness = await Harness.open(new MemoryStorage(), { model });
    try {
      const root = await harness.root();
      const a = await root.submit({ type: "input", content: "a" });
      const b = await root.submit({ type: "input", content: "b" });
      const c = await root.submit({ type: "input", content: "c" });
      const ids = async (status?: Parameters<typeof root.submissions>[0]) =>
        (await root.submissions(status)).map((s) => s.id);
      expect(await ids()).toEqual([a.id, b.id, c.id]);
      expect(await ids({ status: "placed" })).toEqual([a.id]);
      expect(await ids({ status: ["queued", "placed"] })).toEqual([a.id, b.id, c.id]);
      model.open();
      await c.wait();
      expect(await ids({ status: "done" })).toEqual([a.id, b.id, c.id]);
      expect(await ids({ status: ["queued", "placed"] })).toEqual([]);
      await expect(root.submissions({ status: "pending" as never })).rejects.toThrow(
        /submissions: status "pending" is not one of/,
      );
    } finally {
      await harness.close();
    }
  });
});

describe("conversation.stream", () => {
  it("yields the run's text as it streams, its tool call, output and result, and ends settled", async () => {
    const model = new ScriptedModel(
      [
        { text: "Let me count. ", toolCalls: [{ name: "count", arguments: {} }] },
        { text: "Done counting: three." },
      ],
      { chunkSize: 3, chunkDelayMs: 1 },
    );
    const harness = await Harness.open(new MemoryStorage(), { model, tools: [counter] });
    try {
      const root = await harness.root();
      const submission = await root.submit({ type: "input", content: "count" });
      const events: ConversationEvent[] = [];
      for await (const event of submission.stream()) events.push(event);
      const texts = events.filter((e) => e.type === "text").map((e) => e.delta);
      expect(texts.join("")).toBe("Let me count. Done counting: three.");
      expect(texts.length).toBeGreaterThan(2); // streamed in pieces, not once at the end
      const kinds = events.map((e) => e.type).filter((t, i, all) => t !== all[i - 1]);
      expect(kinds).toEqual(["text", "toolCall", "toolOutput", "toolResult", "text", "settled"]);
      expect(
        events
          .filter((e) => e.type === "toolOutput")
          .map((e) => (e as { delta: string }).delta)
          .join(""),
      ).toBe("one two three");
      expect(events.find((e) => e.type === "toolResult")).toMatchObject({
        name: "count",
        content: "counted",
        isError: false,
        details: { to: 3 },
      });
      expect(events.at(-1)).toMatchObject({ type: "settled", submission: { status: "done" } });
    } finally {
      await harness.close();
    }
  });

  it("follows a queued submission's run only, from its start, after the run before it", async () => {
    const model = new ScriptedModel([{ text: "first answer" }, { text: "second answer" }], {
      chunkDelayMs: 1,
    });
    const harness = await Harness.open(new MemoryStorage(), { model });
    try {
      const root = await harness.root();
      await root.submit({ type: "input", content: "one" });
      const second = await root.submit({ type: "input", content: "two" });
      expect(second.submitted.status).toBe("queued");
      let text = "";
      for await (const event of root.stream({ until: second }))
        if (event.type === "text") text += event.delta;
      expect(text).toBe("second answer");
    } finally {
      await harness.close();
    }
  });

  it("a run that settled before the stream began still yields its answer, once", async () => {
    const harness = await Harness.open(new MemoryStorage(), {
      model: new ScriptedModel([{ text: "already here" }]),
    });
    try {
      const root = await harness.root();
      const submission = await root.submit({ type: "input", content: "q" });
      await submission.wait();
      const events: ConversationEvent[] = [];
      for await (const event of submission.stream()) events.push(event);
      expect(events.map((e) => e.type)).toEqual(["text", "settled"]);
      expect(events[0]).toEqual({ type: "text", delta: "already here" });
    } finally {
      await harness.close();
    }
  });

  it("without until, yields what happens from now on until the loop breaks; a signal or close ends it", async () => {
    const model = new ScriptedModel([{ text: "old" }, { text: "new one" }]);
    const harness = await Harness.open(new MemoryStorage(), { model });
    try {
      const root = await harness.root();
      await (await root.submit({ type: "input", content: "before" })).wait();
      const stream = root.stream();
      const first = stream.next(); // the stream starts: history is not replayed
      await new Promise((r) => setTimeout(r, 10));
      await root.submit({ type: "input", content: "after" });
      let text = "";
      const head = (await first).value as ConversationEvent;
      if (head.type === "text") text += head.delta;
      if (text !== "new one")
        for await (const event of stream) {
          if (event.type === "text") text += event.delta;
          if (text === "new one") break;
        }
      expect(text).toBe("new one");
      await harness.whenIdle();
      const controller = new AbortController();
      const waiting = root.stream({ signal: controller.signal });
      const next = waiting.next();
      controller.abort(new Error("enough"));
      await expect(next).rejects.toThrow("enough");
      const open = root.stream().next();
      await new Promise((r) => setTimeout(r, 5));
      await harness.close();
      await expect(open).rejects.toThrow(/the harness was closed/);
    } finally {
      await harness.close();
    }
  });
});
