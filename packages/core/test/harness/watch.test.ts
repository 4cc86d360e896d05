import { describe, expect, it } from "vitest";
import { Harness, ScriptedModel, type ConversationView, type ViewOps } from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";
import { add, GatedModel, storedDoc, text } from "./support/harness.js";

type Frame = { view: ConversationView; ops: ViewOps };

function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const poll = (): void => {
      if (check()) resolve();
      else if (Date.now() - start > timeoutMs) reject(new Error(`timed out waiting for ${what}`));
      else setTimeout(poll, 2);
    };
    poll();
  });
}

describe("conversation.watch", () => {
  it("a late joiner starts from the current view, then gets each change", async () => {
    const model = new ScriptedModel([
      { text: "first" },
      { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] },
      { text: "3" },
    ]);
    const harness = await Harness.open(new MemoryStorage(), { model, tools: [add] });
    const root = await harness.root();
    await (await root.submit({ type: "input", content: "a" })).wait();
    const frames: Frame[] = [];
    const stop = root.watch((view, ops) => void frames.push({ view, ops }));
    await until(() => frames.length > 0, "the first frame");
    expect(frames[0]?.ops).toEqual({ type: "full" });
    expect(frames[0]?.view.entries.map((e) => e.kind)).toEqual([
      "durably.user",
      "durably.assistant",
    ]);
    await (await root.submit({ type: "input", content: "add" })).wait();
    await until(() => frames.at(-1)?.view.entries.length === 6, "the whole second run");
    const last = frames.at(-1) as Frame;
    expect(last.view.entries.map((e) => e.kind)).toEqual([
      "durably.user",
      "durably.assistant",
      "durably.user",
      "durably.assistant",
      "durably.tool-result",
      "durably.assistant",
    ]);
    expect(last.view.live).toEqual({ run: null, generation: null, tools: {} });
    // Change frames carry exactly the appended entries, in order, once each.
    const appended = frames.flatMap((f) => (f.ops.type === "change" ? f.ops.entries : []));
    expect(appended.map((e) => e.id)).toEqual(last.view.entries.slice(2).map((e) => e.id));
    // Some frame showed the tool's slot with its streamed output.
    expect(
      frames.some((f) =>
        Object.values(f.view.live.tools).some((s) => s.output === "adding 1 and 2"),
      ),
    ).toBe(true);
    stop();
    await harness.close();
  });

  it("shows partial output before it is stored, and storage has it within the progress window", async () => {
    const windowMs = 100;
    const model = new GatedModel(() => text("par", "tial", " answer"));
    model.hold();
    model.allow(2);
    const storage = new MemoryStorage();
    const harness = await Harness.open(storage, {
      model,
      settings: { progress: { persistWithinMs: windowMs } },
    });
    const root = await harness.root();
    const frames: Frame[] = [];
    root.watch((view, ops) => void frames.push({ view, ops }));
    await until(() => frames.length > 0, "the first frame");
    const submission = await root.submit({ type: "input", content: "talk" });
    await until(() => frames.at(-1)?.view.live.generation?.text === "partial", "the partial text");
    const seenAt = Date.now();
    const storedText = async (): Promise<string> => {
      // read storage itself: a session read would store the progress early
      const live = (await storedDoc(storage, "durably.live", root.id)) as {
        generation: { text: string } | null;
      };
      return live.generation?.text ?? "";
    };
    expect(await storedText()).not.toBe("partial"); // seen, not yet stored
    while ((await storedText()) !== "partial") {
      if (Date.now() - seenAt > 5000) throw new Error("the progress was never stored");
      await new Promise((r) => setTimeout(r, 5));
    }
    const storedAt = Date.now();
    model.open();
    expect((await submission.wait()).status).toBe("done");
    await harness.close();
    expect(storedAt - seenAt).toBeLessThanOrEqual(windowMs + 250);
  });
});

describe("conversation.watch with a slow listener", () => {
  it("keeps at most maxFrames, then collapses them into one full-view frame", async () => {
    const chunks = 150;
    const model = new ScriptedModel([{ text: "x".repeat(chunks) }], {
      chunkSize: 1,
      chunkDelayMs: 1,
    });
    const harness = await Harness.open(new MemoryStorage(), { model });
    const root = await harness.root();
    const frames: Frame[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    root.watch(
      async (view, ops) => {
        frames.push({ view, ops });
        if (frames.length === 2) await released; // stuck on the second frame
      },
      { maxFrames: 20 },
    );
    await until(() => frames.length > 0, "the first frame");
    const sub = await root.submit({ type: "input", content: "stream" });
    expect((await sub.wait()).status).toBe("done");
    release();
    await until(() => frames.at(-1)?.view.entries.length === 2, "the final view");
    // 1 initial + 1 stuck + at most 20 queued + 1 collapsed
    expect(frames.length).toBeLessThanOrEqual(23);
    const collapsed = frames.slice(2).filter((f) => f.ops.type === "full");
    expect(collapsed.length).toBeGreaterThanOrEqual(1);
    const last = frames.at(-1) as Frame;
    expect(last.view.entries[1]?.model?.[0]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "x".repeat(chunks) }],
      stopReason: "stop",
    });
    await harness.close();
  });
});
