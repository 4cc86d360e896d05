import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import {
  JsonPlusSerializer,
  emptyCheckpoint,
  uuid6,
  type Checkpoint,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { MemoryStorage } from "@durably/storage-memory";
import { describe, expect, it } from "vitest";
import { DurablyCheckpointSaver } from "../src/index.js";
import { encodeItems, portableBase64, toBase64 } from "../src/typed-value.js";
import { recordCommits } from "./support/commits.js";

const meta = { source: "loop" as const, step: 1, parents: {} };

function checkpointWith(values: Record<string, unknown>): Checkpoint {
  const checkpoint = emptyCheckpoint();
  checkpoint.id = uuid6(-1);
  checkpoint.channel_values = values;
  checkpoint.channel_versions = Object.fromEntries(Object.keys(values).map((k) => [k, 1]));
  return checkpoint;
}

async function roundTrip(saver: DurablyCheckpointSaver, values: Record<string, unknown>) {
  const checkpoint = checkpointWith(values);
  const config = await saver.put(
    { configurable: { thread_id: "t" } },
    checkpoint,
    meta,
    checkpoint.channel_versions,
  );
  return (await saver.getTuple(config))?.checkpoint.channel_values;
}

describe("serialization", () => {
  it("stores what LangGraph's serializer writes, non-JSON values included, and reads it back", async () => {
    const saver = new DurablyCheckpointSaver(new MemoryStorage());
    const values = {
      bytes: new Uint8Array([0, 1, 2, 250, 255]),
      nested: { blob: new Uint8Array([9, 8, 7]), when: new Date(0).toISOString() },
      set: new Set(["a", "b"]),
      map: new Map([["k", 1]]),
      nothing: undefined,
      list: [
        new HumanMessage({ content: "hi", id: "1" }),
        undefined,
        new Uint8Array([1]),
        new Set([2]),
      ],
      long: "x".repeat(5000) + "\u2603 \ud83d\ude00",
      unicode: "lone \ud800 surrogate, nul \u0000 and quotes \"'",
      messages: [
        new HumanMessage({ content: "question", id: "h" }),
        new AIMessage({
          content: "",
          id: "a",
          tool_calls: [{ id: "c", name: "f", args: { x: 1 } }],
        }),
        new ToolMessage({ content: "42", id: "t", tool_call_id: "c", name: "f" }),
      ],
    };
    expect(await roundTrip(saver, values)).toEqual(values);
    await saver.close();
  });

  it("writes an array item by item exactly as the serializer writes the whole array", async () => {
    const serde = new JsonPlusSerializer();
    const samples: unknown[][] = [
      [],
      [1, "two", null, undefined, { a: [1, { b: undefined }] }],
      [new Uint8Array([1, 2]), new Set([1]), new Map([["a", 1]]), /re/g, new Error("boom")],
      [new HumanMessage({ content: "hi", id: "1" }), new AIMessage({ content: "yo", id: "2" })],
      ["\u0000", "\ud800", '"', "\\", "\u2028"],
    ];
    for (const sample of samples) {
      const [, whole] = await serde.dumpsTyped(sample);
      const items = await encodeItems(serde, sample);
      expect(`[${items.join(",")}]`).toBe(new TextDecoder().decode(whole));
    }
  });

  it("keeps a long string channel in its document and stores each growth as an append", async () => {
    const saver = new DurablyCheckpointSaver(new MemoryStorage());
    const { events } = recordCommits(await saver.session());
    let config = { configurable: { thread_id: "t" } } as { configurable: Record<string, unknown> };
    let text = "start ".repeat(300);
    for (let version = 1; version <= 5; version++) {
      const checkpoint = checkpointWith({ text });
      checkpoint.channel_versions = { text: version };
      config = (await saver.put(config, checkpoint, meta, { text: version })) as typeof config;
      expect((await saver.getTuple(config))?.checkpoint.channel_values.text).toBe(text);
      text += ` more ${version}`;
    }
    const appends = events
      .flatMap((e) => e.writes)
      .flatMap((w) =>
        w.type === "document.change" && w.content.kind === "delta" ? w.content.ops : [],
      )
      .filter((op) => op[0] === "a");
    expect(appends.map((op) => op[2])).toEqual([" more 1", " more 2", " more 3", " more 4"]);
    await saver.close();
  });

  it("stores a custom serializer's output as it is, bytes included (base64), and reads it back exactly", async () => {
    // Not JSON the parser could round-trip: a number beyond 2^53, and a type LangGraph does not know.
    const serde: SerializerProtocol = {
      dumpsTyped: (value: unknown) =>
        Promise.resolve(
          typeof value === "string" && value.startsWith("raw:")
            ? ["custom", new Uint8Array([0xff, 0x00, 0x10])]
            : [
                "json",
                new TextEncoder().encode(
                  `{"n":12345678901234567890,"v":${JSON.stringify(value ?? null)}}`,
                ),
              ],
        ),
      loadsTyped: (type: string, data: Uint8Array | string) =>
        Promise.resolve(
          type === "custom"
            ? `raw:${Array.from(data as Uint8Array).join(",")}`
            : (
                JSON.parse(typeof data === "string" ? data : new TextDecoder().decode(data)) as {
                  v: unknown;
                }
              ).v,
        ),
    };
    const saver = new DurablyCheckpointSaver(new MemoryStorage(), { serde });
    const { events } = recordCommits(await saver.session());
    const read = await roundTrip(saver, { a: "raw:x", b: [1, 2, 3] });
    expect(read).toEqual({ a: "raw:255,0,16", b: [1, 2, 3] });
    const stored = JSON.stringify(events.flatMap((e) => e.writes));
    expect(stored).toContain('"base64":"/wAQ"');
    // Exactly the serializer's text, big number digits included.
    expect(stored).toContain("12345678901234567890");
    await saver.close();
  });

  it("writes the same base64 through Node's Buffer as the portable encoder browsers use", () => {
    const whole = Uint8Array.from({ length: 0x8000 * 2 + 7 }, (_, i) => (i * 131) % 256);
    for (const bytes of [
      whole,
      whole.subarray(3, 0x8000 + 5),
      new Uint8Array(0),
      whole.subarray(1, 3),
    ])
      expect(toBase64(bytes)).toBe(portableBase64(bytes));
  });
});
