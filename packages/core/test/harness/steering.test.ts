import { describe, expect, it } from "vitest";
import {
  contentText,
  defineTool,
  Harness,
  ScriptedModel,
  type Message,
  type ScriptedTurn,
  type Tool,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";
import { gate } from "./support/harness.js";

/** "wait": runs until its gate opens; `started` resolves when it runs. */
function waitTool(release: Promise<void>, started: () => void): Tool {
  return defineTool({
    name: "wait",
    description: "Waits",
    parameters: { type: "object" },
    replay: "safe",
    execute: async () => {
      started();
      await release;
      return { content: "waited" };
    },
  });
}

async function open(turns: ScriptedTurn[], tools: Tool[] = [], chunkDelayMs?: number) {
  const model = new ScriptedModel(turns, {
    ...(chunkDelayMs !== undefined ? { chunkDelayMs, chunkSize: 2 } : {}),
  });
  const harness = await Harness.open(new MemoryStorage(), { model, tools });
  return { model, harness, root: await harness.root() };
}

const kinds = (entries: readonly { kind: string }[]) => entries.map((e) => e.kind).join(", ");
const texts = (messages: readonly Message[]) =>
  messages.map((m) =>
    m.role === "assistant"
      ? `assistant: ${m.content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("")}`
      : `${m.role}: ${contentText(m.content)}`,
  );

describe("steering > submit({ whenBusy: 'steer' }) goes into the running answer", () => {
  it("lands after the running tool's result and before the next model call, and settles with the run", async () => {
    const release = gate();
    const started = gate();
    const { model, harness, root } = await open(
      [
        { text: "waiting", toolCalls: [{ name: "wait", arguments: {} }] },
        { text: "done, and noted" },
      ],
      [waitTool(release.promise, started.open)],
    );
    try {
      const first = await root.submit({ type: "input", content: "do it" });
      await started.promise;
      const steer = await root.submit({
        type: "input",
        content: "also: be quick",
        whenBusy: "steer",
      });
      expect(steer.submitted.status).toBe("queued");
      expect((await root.view()).inbox.steered?.map((s) => s.submissionId)).toEqual([steer.id]);
      release.open();
      const settled = await first.wait();
      const steered = await steer.wait();
      expect(settled.status).toBe("done");
      expect(steered).toMatchObject({ status: "done", answer: settled.answer });
      expect(model.requests).toHaveLength(2);
      expect(texts(model.requests[1]?.messages ?? [])).toEqual([
        "user: do it",
        "assistant: waiting[toolCall]",
        "toolResult: waited",
        "user: also: be quick",
      ]);
      const entries = await root.entries();
      expect(kinds(entries)).toBe(
        "durably.user, durably.assistant, durably.tool-result, durably.user, durably.assistant",
      );
      expect(entries[3]?.data).toEqual({ submissionId: steer.id });
      const view = await root.view();
      expect(view.live.run).toBeNull();
      expect(view.inbox).toEqual({ queued: [] });
    } finally {
      await harness.close();
    }
  });

  it("steered while the model writes its final answer: the run takes another turn to answer it", async () => {
    const { model, harness, root } = await open(
      [{ text: "a long first answer ".repeat(20) }, { text: "and the steer" }],
      [],
      2,
    );
    try {
      const first = await root.submit({ type: "input", content: "q" });
      await new Promise<void>((resolve) => {
        const stop = root.watch((view) => {
          if ((view.live.generation?.text.length ?? 0) > 10) {
            stop();
            resolve();
          }
        });
      });
      const steer = await root.submit({ type: "input", content: "s", whenBusy: "steer" });
      const settled = await first.wait();
      expect(await steer.wait()).toMatchObject({ status: "done", answer: settled.answer });
      expect(texts(model.requests[1]?.messages ?? []).slice(-1)).toEqual(["user: s"]);
      expect(kinds(await root.entries())).toBe(
        "durably.user, durably.assistant, durably.user, durably.assistant",
      );
    } finally {
      await harness.close();
    }
  });

  it("steering an idle conversation places the input as a normal one", async () => {
    const { harness, root } = await open([{ text: "hi" }]);
    try {
      const steer = await root.submit({ type: "input", content: "hello", whenBusy: "steer" });
      expect(steer.submitted.status).toBe("placed");
      expect((await steer.wait()).status).toBe("done");
    } finally {
      await harness.close();
    }
  });

  it("aborting the conversation withdraws a steered input not yet taken", async () => {
    const release = gate();
    const started = gate();
    const { harness, root } = await open(
      [{ toolCalls: [{ name: "wait", arguments: {} }] }, { text: "never" }],
      [waitTool(release.promise, started.open)],
    );
    try {
      const first = await root.submit({ type: "input", content: "do it" });
      await started.promise;
      const steer = await root.submit({ type: "input", content: "more", whenBusy: "steer" });
      expect(await root.abort()).toBe(2);
      release.open();
      expect((await first.wait()).reason).toBe("aborted");
      expect(await steer.wait()).toMatchObject({ status: "unanswered", reason: "aborted" });
    } finally {
      await harness.close();
    }
  });
});

describe("writes > submit({ type: 'write', entry }) appends an app entry through the inbox", () => {
  it("idle: appended at once and settled done, with no model call", async () => {
    const { model, harness, root } = await open([{ text: "unused" }]);
    try {
      const write = await root.submit({
        type: "write",
        entry: { kind: "app.note", data: { text: "remember" } },
      });
      expect(write.submitted).toMatchObject({ type: "write", status: "done" });
      const entries = await root.entries();
      expect(entries.map((e) => [e.kind, e.data])).toEqual([["app.note", { text: "remember" }]]);
      expect(write.submitted.answer).toBe(entries[0]?.id);
      expect(model.requests).toHaveLength(0);
    } finally {
      await harness.close();
    }
  });

  it("busy: queued in order with inputs, appended between the answers", async () => {
    const release = gate();
    const started = gate();
    const { harness, root } = await open(
      [
        { toolCalls: [{ name: "wait", arguments: {} }] },
        { text: "first answered" },
        { text: "second answered" },
      ],
      [waitTool(release.promise, started.open)],
    );
    try {
      const a = await root.submit({ type: "input", content: "a" });
      await started.promise;
      const w = await root.submit({ type: "write", entry: { kind: "app.marker" } });
      const b = await root.submit({ type: "input", content: "b" });
      expect(w.submitted.status).toBe("queued");
      release.open();
      await a.wait();
      expect((await w.wait()).status).toBe("done");
      expect((await b.wait()).status).toBe("done");
      expect(kinds(await root.entries())).toBe(
        "durably.user, durably.assistant, durably.tool-result, durably.assistant, app.marker, durably.user, durably.assistant",
      );
    } finally {
      await harness.close();
    }
  });

  it("a retried requestId returns the same write; another entry under it is a TypeError", async () => {
    const { harness, root } = await open([]);
    try {
      const first = await root.submit({ type: "write", entry: { kind: "app.x" }, requestId: "w1" });
      const again = await root.submit({ type: "write", entry: { kind: "app.x" }, requestId: "w1" });
      expect(again.id).toBe(first.id);
      await expect(
        root.submit({ type: "write", entry: { kind: "app.y" }, requestId: "w1" }),
      ).rejects.toThrow(/requestId "w1" was used by submission \d+ with different content/);
      expect((await root.entries()).length).toBe(1);
    } finally {
      await harness.close();
    }
  });

  it("rejects a malformed write or steer with a TypeError naming the field, storing nothing", async () => {
    const { harness, root } = await open([]);
    const writes: string[] = [];
    harness.session.subscribeCommits((e) => writes.push(...e.writes.map((w) => w.type)));
    try {
      await expect(root.submit({ type: "write", entry: { kind: "durably.user" } })).rejects.toThrow(
        'submit: entry.kind "durably.user" is reserved (the harness\'s own kinds start with "durably.")',
      );
      await expect(
        root.submit({ type: "write", entry: { kind: "app.x", model: [] } as never }),
      ).rejects.toThrow("submit: entry.model is not a write entry field (kind, data)");
      await expect(
        root.submit({ type: "write", entry: { kind: "app.x" }, whenBusy: "steer" } as never),
      ).rejects.toThrow('submit: a write\'s whenBusy must be "followUp" or "reject"');
      await expect(
        root.submit({
          type: "write",
          entry: { kind: "app.x", data: { at: new Date(0) } },
        } as never),
      ).rejects.toThrow(/submit: entry\.data/);
      await expect(
        root.submit({ type: "input", content: "x", whenBusy: "now" } as never),
      ).rejects.toThrow('submit: whenBusy must be "followUp", "reject" or "steer"');
      expect(writes).toEqual([]);
    } finally {
      await harness.close();
    }
  });
});
