import { describe, expect, it } from "vitest";
import {
  Harness,
  type ConversationView,
  type EntryRecord,
  type EntryId,
  type ConversationId,
} from "@durably/core";
import { MemoryStorage } from "@durably/storage-memory";
import {
  VIEWER_ANSWER,
  VIEWER_FAILURE,
  VIEWER_QUESTION,
  VIEWER_REASONING,
  VIEWER_REQUEST_ID,
  viewerHarnessOptions,
} from "../src/serve/demo-agent.ts";
import { itemView, liveView } from "../src/serve/view-model.ts";
import {
  applyChange,
  applySnapshot,
  emptyState,
  resultHasCall,
  toolCallStatus,
} from "../src/serve/public/view-state.js";

/** Runs the viewer's scripted agent on memory and keeps every frame `conversation.watch` gave. */
async function watchedRun(): Promise<{ frames: ConversationView[]; final: ConversationView }> {
  const pacing = { chunkDelayMs: 1, toolStepMs: 5, retryDelayMs: 5 };
  const harness = await Harness.open(new MemoryStorage(), viewerHarnessOptions(pacing));
  try {
    const conversation = await harness.createConversation();
    const frames: ConversationView[] = [];
    const stop = conversation.watch((view) => void frames.push(view));
    const submission = await conversation.submit({
      type: "input",
      content: VIEWER_QUESTION,
      requestId: VIEWER_REQUEST_ID,
    });
    await submission.wait();
    await harness.whenIdle();
    stop();
    return { frames, final: await conversation.view() };
  } finally {
    await harness.close();
  }
}

describe("the viewer's view model, over a real harness run", () => {
  it("turns each entry into one item: the question, the call, its result, the answer", async () => {
    const { final } = await watchedRun();
    const items = final.entries.map(itemView);
    expect(items.map((i) => i.kind)).toEqual([
      "durably.user",
      "durably.assistant",
      "durably.tool-result",
      "durably.assistant",
    ]);
    expect(items[0]?.messages).toEqual([{ role: "user", text: VIEWER_QUESTION }]);
    expect(items[1]?.messages[0]).toMatchObject({
      role: "assistant",
      stopReason: "toolUse",
      parts: [
        { type: "reasoning", text: VIEWER_REASONING },
        { type: "text", text: "I will add the two numbers with the add tool. " },
        { type: "toolCall", id: "call_1_1", name: "add", arguments: '{"a":2,"b":3}' },
      ],
    });
    expect(items[1]?.usage?.outputTokens).toBeGreaterThan(0);
    expect(items[1]?.usage?.reasoningTokens).toBeGreaterThan(0);
    expect(items[2]).toMatchObject({
      attempt: 1,
      messages: [
        { role: "toolResult", toolCallId: "call_1_1", toolName: "add", text: "5", isError: false },
      ],
    });
    expect(items[3]?.messages[0]).toMatchObject({
      role: "assistant",
      stopReason: "stop",
      parts: [{ type: "text", text: VIEWER_ANSWER }],
    });
    expect(liveView(final)).toEqual({ run: null, generation: null, tools: [], queued: [] });
  });

  it("shows the answer growing in the live state before it becomes an entry", async () => {
    const { frames } = await watchedRun();
    const partials = frames
      .map((frame) => liveView(frame).generation?.text ?? "")
      .filter((text) => VIEWER_ANSWER.startsWith(text) && text.length > 0);
    expect(partials.length).toBeGreaterThan(3);
    expect(partials.some((text) => text.length < VIEWER_ANSWER.length)).toBe(true);
    const running = frames
      .flatMap((frame) => liveView(frame).tools)
      .filter((slot) => slot.status === "running" && slot.output.includes("adding 2 + 3"));
    expect(running.length).toBeGreaterThan(0);
  });

  it("shows the reasoning as it streams, and a failed call waiting for its retry", async () => {
    const { frames } = await watchedRun();
    const lives = frames.map((frame) => liveView(frame));
    const reasoning = lives
      .map((live) => live.generation?.reasoning ?? "")
      .filter((text) => text.length > 0);
    expect(reasoning.some((text) => text.length < VIEWER_REASONING.length)).toBe(true);
    expect(reasoning.every((text) => VIEWER_REASONING.startsWith(text))).toBe(true);
    const waiting = lives.find((live) => live.retry !== undefined);
    expect(waiting?.retry).toMatchObject({
      attempt: 2,
      maxAttempts: 5,
      error: { message: VIEWER_FAILURE, code: "rate_limited", kind: "transient" },
    });
    expect(waiting?.generation, "the failed try's partial output is dropped").toBeNull();
    const second = lives.find((live) => live.generation?.attempt === 2);
    expect(second?.retry, "the retry is over once attempt 2 streams").toBeUndefined();
    expect(VIEWER_ANSWER.startsWith(second?.generation?.text ?? "?")).toBe(true);
  });

  it("joins each tool call to its live slot while it runs and to its result once stored", async () => {
    const { frames, final } = await watchedRun();
    let state = emptyState();
    const seen = new Set<string>();
    for (const [i, frame] of frames.entries()) {
      const data = {
        conversationId: frame.conversationId,
        items: frame.entries.map(itemView),
        live: liveView(frame),
      };
      state = i === 0 ? applySnapshot(state, data) : applyChange(state, data);
      if (state.calls.has("call_1_1")) seen.add(toolCallStatus(state, "call_1_1").status);
    }
    expect([...seen]).toEqual(expect.arrayContaining(["running", "done"]));
    expect(state.items.map((i) => i.entryId)).toEqual(final.entries.map((e) => e.id));
    expect(toolCallStatus(state, "call_1_1")).toMatchObject({ status: "done", result: "5" });
    const result = state.items.find((i) => i.kind === "durably.tool-result");
    expect(result && resultHasCall(state, result)).toBe(true);
  });
});

const entry = (fields: Partial<EntryRecord>): EntryRecord => ({
  id: 9 as EntryId,
  conversationId: 3 as ConversationId,
  kind: "durably.assistant",
  ...fields,
});

describe("the viewer's view model, on data it does not fully know", () => {
  it("shows an unknown part or message as 'other' and an app entry's data as JSON", () => {
    const item = itemView(
      entry({
        model: [
          {
            role: "assistant",
            content: [
              { type: "citation", url: "x" },
              { type: "text", text: "hi" },
            ],
            stopReason: "stop",
          },
          { role: "system", content: "?" },
        ] as never,
      }),
    );
    expect(item.messages).toEqual([
      {
        role: "assistant",
        stopReason: "stop",
        parts: [
          { type: "other", name: "citation" },
          { type: "text", text: "hi" },
        ],
      },
      { role: "other", name: "system" },
    ]);
    expect(itemView(entry({ kind: "app.note", data: { text: "hello" } })).data).toBe(
      '{"text":"hello"}',
    );
  });

  it("keeps reasoning parts, and shows an image as a placeholder without its bytes", () => {
    const data = "A".repeat(4096);
    const item = itemView(
      entry({
        kind: "durably.user",
        model: [
          {
            role: "user",
            content: [
              { type: "text", text: "look: " },
              { type: "image", mediaType: "image/png", data },
            ],
          },
          {
            role: "assistant",
            content: [{ type: "reasoning", text: "thinking" }],
            stopReason: "stop",
          },
        ] as never,
      }),
    );
    expect(item.messages[0]).toEqual({
      role: "user",
      text: "look: [image image/png, about 3 KiB]",
    });
    expect(JSON.stringify(item)).not.toContain(data);
    expect(item.messages[1]).toMatchObject({ parts: [{ type: "reasoning", text: "thinking" }] });
  });

  it("reads a tool result's attempt and how it ended", () => {
    const item = itemView(
      entry({
        kind: "durably.tool-result",
        data: { toolCallId: "c", attempt: 2, interrupted: true },
        model: [
          { role: "toolResult", toolCallId: "c", toolName: "t", content: "x", isError: true },
        ],
      }),
    );
    expect(item).toMatchObject({ attempt: 2, ending: "interrupted" });
  });

  it("passes reasoning, retries and attempts of newer live states through and ignores other fields", () => {
    const live = liveView({
      live: {
        run: { submissionId: 4, taskId: 5 },
        generation: { taskId: 5, text: "a", toolCalls: [], reasoning: "because", attempt: 2 },
        retry: {
          taskId: 5,
          attempt: 2,
          maxAttempts: 5,
          retryAt: 1000,
          error: { message: "429", kind: "transient", secret: "no" },
        },
        tools: {},
        approvals: { pending: 1 },
      },
      inbox: {
        queued: [
          { submissionId: 6, content: "next" },
          { submissionId: 7, write: { kind: "app.note", data: { a: 1 } } },
        ],
      },
    } as never);
    expect(live).toEqual({
      run: { submissionId: 4, taskId: 5 },
      generation: { taskId: 5, text: "a", toolCalls: [], reasoning: "because", attempt: 2 },
      retry: {
        taskId: 5,
        attempt: 2,
        maxAttempts: 5,
        retryAt: 1000,
        error: { message: "429", kind: "transient" },
      },
      tools: [],
      queued: [
        { submissionId: 6, content: "next" },
        { submissionId: 7, content: "(write: app.note)" },
      ],
    });
  });

  it("never applies an item twice, and keeps the live state when a change carries none", () => {
    const first = applySnapshot(emptyState(), {
      conversationId: 3,
      items: [itemView(entry({ id: 1 as EntryId }))],
      live: { run: null, generation: null, tools: [], queued: [] },
    });
    const next = applyChange(first, {
      items: [itemView(entry({ id: 1 as EntryId })), itemView(entry({ id: 2 as EntryId }))],
    });
    expect(next.items.map((i) => i.entryId)).toEqual([1, 2]);
    expect(next.live).toBe(first.live);
    expect(toolCallStatus(next, "missing")).toEqual({ status: "no result" });
  });
});
