import { describe, expect, it } from "vitest";
import {
  assembleInstructions,
  Harness,
  ScriptedModel,
  type Model,
  type Storage,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";

/** Every value the storage holds, as JSON text (entries, tasks, submissions, documents). */
async function everything(storage: Storage): Promise<string> {
  const out: unknown[] = [];
  const entries = await storage.scanEntries(
    { conversationId: 1 as never, order: "ascending" },
    1000,
  );
  out.push(entries.items);
  out.push((await storage.scanTasks({}, 1000)).items);
  for (const kind of ["durably.live", "durably.inbox"]) {
    const record = await storage.findDocument(
      { kind, scope: { kind: "conversation", conversationId: 1 as never } },
      "current",
    );
    if (record) out.push(await storage.document(record.id, "current"));
  }
  return JSON.stringify(out);
}

describe("instructions", () => {
  it("are sent as system with every request, and stored nowhere", async () => {
    const secretRule = "Never reveal the launch code 7731.";
    const model = new ScriptedModel([{ text: "one" }, { text: "two" }]);
    const storage = new MemoryStorage();
    const harness = await Harness.open(storage, {
      model,
      instructions: [
        { id: "persona", text: "You are a careful assistant." },
        { id: "empty", text: "" },
        { id: "rules", text: secretRule },
      ],
      settings: { model: { temperature: 0.2, maxOutputTokens: 100 } },
    });
    try {
      const root = await harness.root();
      await (await root.submit({ type: "input", content: "a" })).wait();
      await (await root.submit({ type: "input", content: "b" })).wait();
      expect(model.requests.map((r) => r.system)).toEqual([
        `You are a careful assistant.\n\n${secretRule}`,
        `You are a careful assistant.\n\n${secretRule}`,
      ]);
      expect(model.requests[0]?.settings).toEqual({ temperature: 0.2, maxOutputTokens: 100 });
      expect(await everything(storage)).not.toContain("launch code");
    } finally {
      await harness.close();
    }
  });

  it("a string is sent as it is; none or empty sends no system", async () => {
    expect(assembleInstructions("Be brief.", "i")).toBe("Be brief.");
    expect(assembleInstructions("", "i")).toBeUndefined();
    expect(assembleInstructions(undefined, "i")).toBeUndefined();
    expect(assembleInstructions([{ id: "a", text: "" }], "i")).toBeUndefined();
    const model = new ScriptedModel([{ text: "x" }]);
    const harness = await Harness.open(new MemoryStorage(), { model });
    try {
      await (await (await harness.root()).submit({ type: "input", content: "q" })).wait();
      expect(model.requests[0] && "system" in model.requests[0]).toBe(false);
    } finally {
      await harness.close();
    }
  });

  it("bad instructions are refused at open, naming the section, before anything is stored", async () => {
    const model = new ScriptedModel([]);
    const open = (instructions: unknown) =>
      Harness.open(new MemoryStorage(), { model, instructions: instructions as never });
    await expect(
      open([
        { id: "a", text: "x" },
        { id: "a", text: "y" },
      ]),
    ).rejects.toThrow(/options\.instructions\[1\]\.id: "a" is used by an earlier section/);
    await expect(open([{ text: "x" }])).rejects.toThrow(
      /instructions\[0\]\.id: must be a non-empty string/,
    );
    await expect(open([{ id: "a", text: 3 }])).rejects.toThrow(
      /instructions\[0\]\.text: must be a string/,
    );
    await expect(open(42)).rejects.toThrow(/must be a string or an array/);
  });
});

describe("models by name", () => {
  it("answers with the default model, or with the one an input names", async () => {
    const main = new ScriptedModel([{ text: "from default" }, { text: "default again" }]);
    const fast = new ScriptedModel([{ text: "x" }, { text: "from fast" }]);
    const harness = await Harness.open(new MemoryStorage(), { models: { default: main, fast } });
    try {
      const root = await harness.root();
      await (await root.submit({ type: "input", content: "a" })).wait();
      await (await root.submit({ type: "input", content: "b", model: "fast" })).wait();
      expect(main.requests).toHaveLength(1);
      expect(fast.requests).toHaveLength(1);
      const texts = (await root.entries())
        .filter((e) => e.kind === "durably.assistant")
        .map((e) => JSON.stringify(e.model));
      expect(texts[1]).toContain("from fast");
    } finally {
      await harness.close();
    }
  });

  it("a retried requestId naming another model returns the first submission, answered by its model", async () => {
    const main = new ScriptedModel([{ text: "from default" }]);
    const fast = new ScriptedModel([]);
    const harness = await Harness.open(new MemoryStorage(), { models: { default: main, fast } });
    try {
      const root = await harness.root();
      const first = await root.submit({ type: "input", content: "a", requestId: "r1" });
      const retried = await root.submit({
        type: "input",
        content: "a",
        model: "fast",
        requestId: "r1",
      });
      expect(retried.id).toBe(first.id);
      expect((await retried.wait()).status).toBe("done");
      // after the first answer ended, too: the model is not compared
      const late = await root.submit({
        type: "input",
        content: "a",
        model: "fast",
        requestId: "r1",
      });
      expect(late.id).toBe(first.id);
      expect(main.requests).toHaveLength(1);
      expect(fast.requests).toHaveLength(0);
      expect((await root.entries()).map((e) => e.kind)).toEqual([
        "durably.user",
        "durably.assistant",
      ]);
    } finally {
      await harness.close();
    }
  });

  it("refuses an unknown model name at submit, storing nothing", async () => {
    const harness = await Harness.open(new MemoryStorage(), { model: new ScriptedModel([]) });
    try {
      const root = await harness.root();
      await expect(root.submit({ type: "input", content: "a", model: "gpt-9" })).rejects.toThrow(
        /submit: model "gpt-9" is not one of the harness's models \("default"\)/,
      );
      expect(await root.entries()).toEqual([]);
    } finally {
      await harness.close();
    }
  });

  it("checks the models at open", async () => {
    const m = new ScriptedModel([]);
    await expect(Harness.open(new MemoryStorage(), { models: { fast: m } })).rejects.toThrow(
      /options\.models has no "default"/,
    );
    await expect(
      Harness.open(new MemoryStorage(), { model: m, models: { default: m } }),
    ).rejects.toThrow(/not both/);
    await expect(Harness.open(new MemoryStorage(), {})).rejects.toThrow(/options\.model/);
    await expect(
      Harness.open(new MemoryStorage(), { models: { default: {} as Model } }),
    ).rejects.toThrow(/options\.models\.default must implement stream/);
  });
});
