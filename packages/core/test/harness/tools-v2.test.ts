import { describe, expect, it } from "vitest";
import {
  defineDoc,
  defineTool,
  Harness,
  ScriptedModel,
  type HarnessOptions,
  type ScriptedTurn,
  type Tool,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";

const Ledger = defineDoc<{ items: string[] }, "conversation">({
  kind: "app.ledger",
  version: 1,
  scope: "conversation",
  initial: () => ({ items: [] }),
});

async function run(turns: ScriptedTurn[], tools: Tool[], options: Partial<HarnessOptions> = {}) {
  const model = new ScriptedModel(turns);
  const harness = await Harness.open(new MemoryStorage(), { model, tools, ...options });
  const root = await harness.root();
  return { model, harness, root };
}

describe("tools v2", () => {
  it("stores a result's details with the result entry for UIs, and never sends them to the model", async () => {
    const look = defineTool({
      name: "look",
      description: "Looks",
      parameters: { type: "object" },
      replay: "safe",
      execute: () => ({
        content: [{ type: "text", text: "a red square" }],
        details: { pixels: [[255, 0, 0]], source: "camera 2" },
      }),
    });
    const { model, harness, root } = await run(
      [{ toolCalls: [{ name: "look", arguments: {} }] }, { text: "red" }],
      [look],
    );
    try {
      await (await root.submit({ type: "input", content: "what is it?" })).wait();
      const result = (await root.entries())[2];
      expect(result?.data).toMatchObject({
        details: { pixels: [[255, 0, 0]], source: "camera 2" },
      });
      expect(result?.model?.[0]).toEqual({
        role: "toolResult",
        toolCallId: "call_1_1",
        toolName: "look",
        content: [{ type: "text", text: "a red square" }],
        isError: false,
      });
      expect(JSON.stringify(model.requests[1])).not.toContain("camera 2");
    } finally {
      await harness.close();
    }
  });

  it("turns details that are not JSON, or an unknown result field, into an error result naming it", async () => {
    const bad = defineTool({
      name: "bad",
      description: "",
      parameters: { type: "object" },
      replay: "safe",
      execute: ({ which }) =>
        which === 1
          ? ({ content: "x", details: { at: new Date(0) } } as never)
          : ({ content: "x", detail: "typo" } as never),
    });
    const { harness, root } = await run(
      [
        {
          toolCalls: [
            { name: "bad", arguments: { which: 1 } },
            { name: "bad", arguments: { which: 2 } },
          ],
        },
        { text: "ok" },
      ],
      [bad],
    );
    try {
      await (await root.submit({ type: "input", content: "q" })).wait();
      const results = (await root.entries()).filter((e) => e.kind === "durably.tool-result");
      expect(results.map((e) => (e.model?.[0] as { content: string }).content)).toEqual([
        expect.stringMatching(/^error: bad returned .*\(details\.at: .*\)$/),
        expect.stringMatching(/^error: bad returned .*\(detail is not a result field\)$/),
      ]);
    } finally {
      await harness.close();
    }
  });

  it("keeps the newest output within settings.toolOutput, and an interrupted result says what was cut", async () => {
    const chatty = defineTool({
      name: "chatty",
      description: "",
      parameters: { type: "object" },
      replay: "safe",
      execute: async (_args, api) => {
        for (let i = 1; i <= 50; i++) await api.output(`line ${i}\n`);
        return { content: "done" };
      },
    });
    let started: () => void = () => undefined;
    const blocking = new Promise<void>((resolve) => (started = resolve));
    const gate = defineTool({
      name: "gate",
      description: "",
      parameters: { type: "object" },
      replay: "unsafe",
      execute: async (_args, api) => {
        for (let i = 1; i <= 8; i++) await api.output(`step ${i}\n`);
        started();
        return new Promise((_resolve, reject) =>
          api.signal.addEventListener("abort", () => reject(api.signal.reason as Error)),
        );
      },
    });
    const { harness, root } = await run(
      [
        { toolCalls: [{ name: "chatty", arguments: {} }] },
        { text: "ok" },
        { toolCalls: [{ name: "gate", arguments: {} }] },
        { text: "ok" },
      ],
      [chatty, gate],
      { settings: { toolOutput: { maxLines: 5, maxBytes: 1_000 } } },
    );
    try {
      const slots: { output: string; cut?: unknown }[] = [];
      root.watch((view) => {
        for (const slot of Object.values(view.live.tools))
          slots.push({ output: slot.output, cut: slot.outputCut });
      });
      await (await root.submit({ type: "input", content: "q" })).wait();
      const last = slots.filter((s) => s.output.startsWith("line")).at(-1);
      expect(last?.output).toBe("line 46\nline 47\nline 48\nline 49\nline 50\n");
      const cutText = Array.from({ length: 45 }, (_, i) => `line ${i + 1}\n`).join("");
      expect(last?.cut).toEqual({ lines: 45, bytes: cutText.length, chars: cutText.length });
      // Aborted mid-call, the result carries the output with the marker.
      const second = await root.submit({ type: "input", content: "gate" });
      await blocking;
      await root.abort();
      await second.wait();
      const aborted = (await root.entries()).filter((e) => e.kind === "durably.tool-result").at(-1);
      expect((aborted?.model?.[0] as { content: string }).content).toBe(
        "aborted: the tool call was aborted before it finished. Output so far:\n[earlier output cut: 3 lines, 21 bytes]\nstep 4\nstep 5\nstep 6\nstep 7\nstep 8\n",
      );
    } finally {
      await harness.close();
    }
  });

  it("runs a sequential tool's calls one at a time, in call order, while other tools run alongside", async () => {
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const step = defineTool<{ n: number }>({
      name: "step",
      description: "",
      parameters: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
      replay: "safe",
      sequential: true,
      execute: async ({ n }) => {
        running++;
        most = Math.max(most, running);
        log.push(`start ${n}`);
        await new Promise((r) => setTimeout(r, 15 - n * 4));
        log.push(`end ${n}`);
        running--;
        return { content: `step ${n}` };
      },
    });
    const other = defineTool({
      name: "other",
      description: "",
      parameters: { type: "object" },
      replay: "safe",
      execute: () => {
        log.push("other");
        return { content: "other" };
      },
    });
    const { harness, root } = await run(
      [
        {
          toolCalls: [
            { name: "step", arguments: { n: 1 } },
            { name: "step", arguments: { n: 2 } },
            { name: "other", arguments: {} },
            { name: "step", arguments: { n: 3 } },
          ],
        },
        { text: "ok" },
      ],
      [step, other],
    );
    try {
      await (await root.submit({ type: "input", content: "go" })).wait();
      expect(most).toBe(1);
      expect(log.filter((l) => l !== "other")).toEqual([
        "start 1",
        "end 1",
        "start 2",
        "end 2",
        "start 3",
        "end 3",
      ]);
      expect(log.indexOf("other")).toBeLessThan(log.indexOf("end 1"));
      const results = (await root.entries()).filter((e) => e.kind === "durably.tool-result");
      expect(results).toHaveLength(4);
    } finally {
      await harness.close();
    }
  });

  it("api.commit stores the tool's app state in one commit, after its output; a throwing commit stores nothing", async () => {
    const order: string[] = [];
    const book = defineTool<{ item: string }>({
      name: "book",
      description: "",
      parameters: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
      replay: "safe",
      execute: async ({ item }, api) => {
        void api.output(`booking ${item}\n`);
        const count = await api.commit(async (tx) => {
          const ledger = await tx.doc(Ledger, api.conversationId);
          ledger.items.push(item);
          await tx.appendEntry(api.conversationId, { kind: "app.booked", data: { item } });
          return ledger.items.length;
        });
        // With a key, the second commit under it returns the first one's result without running.
        const again = await api
          .commit(
            () => {
              throw new Error("must not run");
            },
            { key: "noop" },
          )
          .catch(() => "threw");
        const first = await api.commit(() => "recorded", { key: "once" });
        const second = await api.commit(() => "ran twice", { key: "once" });
        const memo = await api.memo("quote", () => 42);
        order.push(`${count} ${again} ${first} ${second} ${memo}`);
        await api
          .commit(async (tx) => {
            (await tx.doc(Ledger, api.conversationId)).items.push("half");
            throw new Error("changed my mind");
          })
          .catch((error: Error) => order.push(error.message));
        return { content: `booked ${item}` };
      },
    });
    const { harness, root } = await run(
      [{ toolCalls: [{ name: "book", arguments: { item: "room 7" } }] }, { text: "booked" }],
      [book],
    );
    const commits: string[][] = [];
    harness.session.subscribeCommits((event) => {
      commits.push(
        event.writes.flatMap((w) =>
          w.type === "entry"
            ? [`entry ${w.value.kind}`]
            : w.type === "document.create"
              ? [`create ${w.record.kind}`]
              : [],
        ),
      );
    });
    try {
      await (await root.submit({ type: "input", content: "book it" })).wait();
      expect(order).toEqual(["1 threw recorded recorded 42", "changed my mind"]);
      expect(await harness.session.snapshot(Ledger, root.id)).toEqual({ items: ["room 7"] });
      // The ledger document and the entry went in one commit.
      expect(commits.filter((c) => c.includes("entry app.booked"))).toEqual([
        ["entry app.booked", "create app.ledger"],
      ]);
      const task = (await harness.session.read.scanTasks({ kind: "durably.tool" }, 10)).items[0];
      expect(task?.memos).toEqual({
        "commit:once": { status: "done", value: "recorded" },
        "memo:quote": { status: "done", value: 42 },
      });
    } finally {
      await harness.close();
    }
  });
});
