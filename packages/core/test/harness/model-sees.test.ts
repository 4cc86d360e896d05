import { describe, expect, it } from "vitest";
import { Harness, ScriptedModel, type Message, type ModelEvent } from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";
import { add, GatedModel, text } from "./support/harness.js";

const user = (content: string): Message => ({ role: "user", content });

describe("what the model sees", () => {
  it("an answer aborted mid-stream stays in the transcript and the view, and is left out of the next request", async () => {
    const model = new GatedModel((_request, index): ModelEvent[] =>
      index === 0 ? text("I was say", "ing that", " never sent") : text("fresh answer"),
    );
    model.hold();
    model.allow(2);
    const harness = await Harness.open(new MemoryStorage(), { model });
    try {
      const root = await harness.root();
      const first = await root.submit({ type: "input", content: "tell me a story" });
      await model.emittedAtLeast(2);
      await first.abort();
      expect(await first.wait()).toMatchObject({ status: "unanswered", reason: "aborted" });
      model.open();
      const second = await root.submit({ type: "input", content: "just say hi" });
      expect(await second.answerText()).toBe("fresh answer");

      const half = {
        role: "assistant",
        content: [{ type: "text", text: "I was saying that" }],
        stopReason: "aborted",
      };
      // The transcript and the view keep the half-answer...
      const entries = await root.entries();
      expect(entries.map((e) => e.model?.[0])).toEqual([
        user("tell me a story"),
        half,
        user("just say hi"),
        expect.objectContaining({ role: "assistant", stopReason: "stop" }),
      ]);
      expect((await root.view()).entries[1]?.model?.[0]).toEqual(half);
      // ...but the next request does not show it to the model.
      expect(model.requests[1]?.messages).toEqual([user("tell me a story"), user("just say hi")]);
    } finally {
      await harness.close();
    }
  });

  it("an answer that ended with a model error is kept in the transcript and left out of the next request", async () => {
    const model = new ScriptedModel(
      [
        { text: "half of it ", error: { message: "the provider broke", kind: "invalid" } },
        { text: "the answer" },
      ],
      { chunkSize: 5 },
    );
    const harness = await Harness.open(new MemoryStorage(), { model });
    try {
      const root = await harness.root();
      const failed = await (await root.submit({ type: "input", content: "q1" })).wait();
      expect(failed).toMatchObject({ status: "unanswered", reason: "model-error" });
      expect((await root.entries())[1]?.model?.[0]).toMatchObject({ stopReason: "error" });
      // The request holding no assistant message gets turn 0 again: its error is scripted for ever.
      const again = await (await root.submit({ type: "input", content: "q2" })).wait();
      expect(again).toMatchObject({ status: "unanswered" });
      expect(model.requests[1]?.messages).toEqual([user("q1"), user("q2")]);
    } finally {
      await harness.close();
    }
  });

  it("a completed tool round stays in view, with its results after the call", async () => {
    const model = new ScriptedModel([
      { text: "adding", toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] },
      { text: "3" },
      { text: "bye" },
    ]);
    const harness = await Harness.open(new MemoryStorage(), { model, tools: [add] });
    try {
      const root = await harness.root();
      await (await root.submit({ type: "input", content: "1+2" })).wait();
      await (await root.submit({ type: "input", content: "thanks" })).wait();
      expect(model.requests[2]?.messages.map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "user",
      ]);
    } finally {
      await harness.close();
    }
  });
});
