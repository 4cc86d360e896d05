import { describe, expect, it } from "vitest";
import {
  Harness,
  ScriptedModel,
  SessionClosed,
  UnknownRecord,
  type ConversationId,
  type Model,
  type ModelEvent,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";
import { GatedModel, text } from "./support/harness.js";

describe("Harness: lifecycle and failures", () => {
  it("a model that throws mid-stream (not a network error) settles model-error at once and keeps the partial text", async () => {
    const broken: Model = {
      async *stream(): AsyncGenerator<ModelEvent> {
        yield { type: "text", delta: "half an ans" };
        await new Promise((r) => setTimeout(r, 5));
        throw new TypeError("connection reset");
      },
    };
    const errors: unknown[] = [];
    const harness = await Harness.open(new MemoryStorage(), {
      model: broken,
      onError: (e) => errors.push(e),
    });
    const root = await harness.root();
    const settled = await (await root.submit({ type: "input", content: "q" })).wait();
    expect(settled).toMatchObject({
      status: "unanswered",
      reason: "model-error",
      detail: {
        name: "ModelError",
        message: "the model threw TypeError: connection reset",
        code: "MODEL_THREW",
        retryable: false,
        attempts: 1,
      },
    });
    const last = (await root.entries()).at(-1);
    expect(last?.model?.[0]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "half an ans" }],
      stopReason: "error",
    });
    expect((await root.view()).live).toEqual({ run: null, generation: null, tools: {} });
    await harness.close();
  });

  it("close() rejects pending waits with SessionClosed; later calls reject", async () => {
    const model = new GatedModel(() => text("never"));
    model.hold();
    const harness = await Harness.open(new MemoryStorage(), { model });
    const root = await harness.root();
    const sub = await root.submit({ type: "input", content: "q" });
    const waiting = sub.wait();
    await harness.close();
    await expect(waiting).rejects.toBeInstanceOf(SessionClosed);
    await expect(harness.resume()).rejects.toBeInstanceOf(SessionClosed);
    await expect(root.submit({ type: "input", content: "again" })).rejects.toBeInstanceOf(
      SessionClosed,
    );
    await harness.close(); // idempotent
  });

  it("harness.conversation() rejects an unknown id; createConversation() makes an independent one", async () => {
    const harness = await Harness.open(new MemoryStorage(), {
      model: new ScriptedModel([{ text: "in the new one" }]),
    });
    await expect(harness.conversation(999 as ConversationId)).rejects.toBeInstanceOf(UnknownRecord);
    const created = await harness.createConversation();
    expect((await harness.conversation(created.id)).id).toBe(created.id);
    await (await created.submit({ type: "input", content: "hi" })).wait();
    expect(await (await harness.root()).entries()).toEqual([]);
    expect((await created.entries()).map((e) => e.kind)).toEqual([
      "durably.user",
      "durably.assistant",
    ]);
    await harness.close();
  });

  it("the model's context starts at the newest head marker", async () => {
    const model = new ScriptedModel([{ text: "first" }, { text: "after the summary" }]);
    const harness = await Harness.open(new MemoryStorage(), { model });
    const root = await harness.root();
    await (await root.submit({ type: "input", content: "long question" })).wait();
    // An application compacts: a summary entry that starts the context at itself.
    await harness.session.commit(async (tx) => {
      const placeholder = await tx.appendEntry(root.id, { kind: "app.compaction-start" });
      await tx.appendEntry(root.id, {
        kind: "app.summary",
        head: placeholder.id,
        model: [
          { role: "user", content: "summary: asked a long question" },
          { role: "assistant", content: [{ type: "text", text: "first" }], stopReason: "stop" },
        ],
      });
    });
    await (await root.submit({ type: "input", content: "next" })).wait();
    expect(model.requests[1]?.messages).toEqual([
      { role: "user", content: "summary: asked a long question" },
      { role: "assistant", content: [{ type: "text", text: "first" }], stopReason: "stop" },
      { role: "user", content: "next" },
    ]);
    await harness.close();
  });
});
