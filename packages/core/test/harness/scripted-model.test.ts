import { describe, expect, it } from "vitest";
import {
  ROOT_CONVERSATION_ID,
  ScriptedModel,
  type Message,
  type ModelEvent,
  type ModelRequest,
} from "../../src/index.js";

async function collect(stream: AsyncIterable<ModelEvent>): Promise<ModelEvent[]> {
  const out: ModelEvent[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

const ask = (messages: Message[] = [{ role: "user", content: "hi" }]): ModelRequest => ({
  messages,
  tools: [],
  conversationId: ROOT_CONVERSATION_ID,
});

describe("ScriptedModel", () => {
  it("streams a turn's text in chunks, then done with stop and usage", async () => {
    const model = new ScriptedModel([{ text: "2 + 3 = 5" }], { chunkSize: 4 });
    const events = await collect(model.stream(ask()));
    expect(events).toEqual([
      { type: "text", delta: "2 + " },
      { type: "text", delta: "3 = " },
      { type: "text", delta: "5" },
      { type: "done", stopReason: "stop", usage: { inputTokens: 2, outputTokens: 9 } },
    ]);
  });

  it("emits tool calls with stable ids and stopReason toolUse", async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: "add", arguments: { a: 2, b: 3 } },
          { id: "x", name: "add", arguments: {} },
        ],
      },
    ]);
    const events = await collect(model.stream(ask()));
    expect(events.slice(0, 2)).toEqual([
      { type: "toolCall", id: "call_1_1", name: "add", arguments: { a: 2, b: 3 } },
      { type: "toolCall", id: "x", name: "add", arguments: {} },
    ]);
    expect(events[2]).toMatchObject({ type: "done", stopReason: "toolUse" });
  });

  it("answers by the number of assistant messages in the request, so a rerun gets the same turn", async () => {
    const model = new ScriptedModel([{ text: "one" }, { text: "two" }]);
    const first = ask();
    const second = ask([
      { role: "user", content: "hi" },
      { role: "assistant", content: [{ type: "text", text: "one" }], stopReason: "stop" },
      { role: "user", content: "again" },
    ]);
    const text = async (r: ModelRequest): Promise<string> =>
      (await collect(model.stream(r))).map((e) => (e.type === "text" ? e.delta : "")).join("");
    expect(await text(second)).toBe("two");
    expect(await text(first)).toBe("one");
    expect(await text(first)).toBe("one");
    expect(model.requests).toHaveLength(3);
  });

  it("ends with a clear error event when the script is exhausted", async () => {
    const model = new ScriptedModel([]);
    const events = await collect(model.stream(ask()));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "error", code: "SCRIPT_EXHAUSTED" });
    expect((events[0] as { message: string }).message).toMatch(/script has 0 turn\(s\).*turn 1/);
  });

  it("can script a failing turn after some text", async () => {
    const model = new ScriptedModel([{ text: "par", error: "overloaded" }]);
    expect(await collect(model.stream(ask()))).toEqual([
      { type: "text", delta: "par" },
      { type: "error", message: "overloaded" },
    ]);
  });

  it("never splits a surrogate pair across chunks", async () => {
    const model = new ScriptedModel([{ text: "a😀b😀" }], { chunkSize: 1 });
    const deltas = (await collect(model.stream(ask())))
      .filter((e) => e.type === "text")
      .map((e) => (e as { delta: string }).delta);
    expect(deltas).toEqual(["a", "😀", "b", "😀"]);
  });

  it("with chunkDelayMs, chunks arrive on separate timer turns", async () => {
    const model = new ScriptedModel([{ text: "abcdef" }], { chunkSize: 2, chunkDelayMs: 1 });
    let ticks = 0;
    const interval = setInterval(() => ticks++, 0);
    const seen: number[] = [];
    for await (const event of model.stream(ask())) if (event.type === "text") seen.push(ticks);
    clearInterval(interval);
    expect(seen).toHaveLength(3);
    expect(seen[2]).toBeGreaterThan(seen[0] as number);
  });

  it("rejects with the signal's reason when aborted mid-stream", async () => {
    const model = new ScriptedModel([{ text: "abcdefgh" }], { chunkSize: 1, chunkDelayMs: 1 });
    const controller = new AbortController();
    const reason = new Error("stop now");
    const seen: string[] = [];
    const run = (async () => {
      for await (const event of model.stream(ask(), { signal: controller.signal })) {
        if (event.type === "text") seen.push(event.delta);
        if (seen.length === 2) controller.abort(reason);
      }
    })();
    await expect(run).rejects.toBe(reason);
    expect(seen).toEqual(["a", "b"]);
  });

  it("checks the script when constructed, naming the bad field", () => {
    expect(() => new ScriptedModel([{ text: 3 } as never])).toThrow(
      /turns\[0\]\.text: must be a string/,
    );
    expect(
      () => new ScriptedModel([{}, { toolCalls: [{ name: "f", arguments: { n: Number.NaN } }] }]),
    ).toThrow(/turns\[1\]\.toolCalls\[0\]\.arguments\.n/);
    expect(() => new ScriptedModel([{ txt: "typo" } as never])).toThrow(
      /turns\[0\]\.txt: not a turn field/,
    );
    expect(() => new ScriptedModel([{ error: { message: "m", bogus: 1 } } as never])).toThrow(
      "turns[0].error.bogus: not an error field (message, code, retryable, retryAfterMs, kind, text, thrown)",
    );
    expect(() => new ScriptedModel([], { chunkSize: 0 })).toThrow(/chunkSize/);
  });
});
