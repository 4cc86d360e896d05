import { HumanMessage } from "@langchain/core/messages";
import { emptyCheckpoint, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";
import { afterEach, describe, expect, it } from "vitest";
import { DurablyCheckpointSaver } from "../src/index.js";
import { jsonlBackend, memoryBackend, sqliteBackend, storeBackend } from "./support/backends.js";

/*
 * Names LangGraph hands the saver as object keys (checkpoint namespaces,
 * channel names) that are also keys of `Object.prototype`: each must be an
 * ordinary name, never the inherited property (a raw TypeError) nor the
 * `__proto__` setter (a silently dropped value).
 */
const NAMES = ["constructor", "toString", "hasOwnProperty", "valueOf", "__proto__"];

const places: { remove: () => void }[] = [];
afterEach(() => {
  for (const place of places.splice(0)) place.remove();
});

/** An object with own keys, `__proto__` included (computed keys never call the setter). */
const own = (entries: [string, unknown][]): Record<string, unknown> => Object.fromEntries(entries);

function checkpoint(
  values: Record<string, unknown>,
  versions?: Record<string, number>,
): Checkpoint {
  const c = emptyCheckpoint();
  c.id = uuid6(-1);
  c.channel_values = values;
  c.channel_versions = versions ?? Object.fromEntries(Object.keys(values).map((k) => [k, 1]));
  return c;
}
const meta = (step: number) => ({ source: "loop" as const, step, parents: {} });

/** Own entries sorted by key, so `__proto__` is compared as the key it is. */
const entriesOf = (value: object | undefined): [string, unknown][] =>
  Object.entries(value ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

async function listed(saver: DurablyCheckpointSaver, configurable: Record<string, unknown>) {
  const out: string[] = [];
  for await (const t of saver.list({ configurable })) out.push(t.checkpoint.id);
  return out;
}

/** What the names test wrote, read back through every read path. */
async function readBack(saver: DurablyCheckpointSaver, written: Written) {
  const out: Record<string, unknown> = {};
  for (const name of NAMES) {
    const { ns, channels } = written[name] as Written[string];
    const inNs = await saver.getTuple({ configurable: { thread_id: "ns", checkpoint_ns: name } });
    const chans = await saver.getTuple({ configurable: { thread_id: `ch-${name}` } });
    const first = await saver.getTuple(channels.first);
    out[name] = {
      ns: {
        values: entriesOf(inNs?.checkpoint.channel_values),
        config: inNs?.config.configurable,
        writes: inNs?.pendingWrites,
        listed: await listed(saver, { thread_id: "ns", checkpoint_ns: name }),
        expected: ns.id,
      },
      channels: {
        values: entriesOf(chans?.checkpoint.channel_values),
        versions: entriesOf(chans?.checkpoint.channel_versions),
        prototype: Object.getPrototypeOf(chans?.checkpoint.channel_values) === Object.prototype,
        first: entriesOf(first?.checkpoint.channel_values),
        writes: chans?.pendingWrites,
        listed: (await listed(saver, { thread_id: `ch-${name}` })).length,
      },
    };
  }
  out.all = (await listed(saver, {})).length;
  return out;
}

type Written = Record<string, { ns: { id: string }; channels: { first: RunnableConfig } }>;

async function write(saver: DurablyCheckpointSaver): Promise<Written> {
  const written: Written = {};
  for (const name of NAMES) {
    // The name as a checkpoint namespace: put, putWrites.
    const c = checkpoint({ x: 1 });
    const config = await saver.put(
      { configurable: { thread_id: "ns", checkpoint_ns: name } },
      c,
      meta(0),
      c.channel_versions,
    );
    await saver.putWrites(config, [["x", 2]], "task");

    // The name as a channel: inline, then carried by a put that does not change it; a
    // second channel of that name only in channel_versions (no value); writes to it.
    const thread = { configurable: { thread_id: `ch-${name}` } };
    const c1 = checkpoint(
      own([
        [name, { v: 1 }],
        ["other", 1],
      ]),
    );
    const first = await saver.put(thread, c1, meta(0), c1.channel_versions);
    const c2 = checkpoint(
      own([
        [name, { v: 1 }],
        ["other", 2],
        ["messages", [new HumanMessage({ content: "hi", id: "1" })]],
      ]),
      own([
        [name, 1],
        ["other", 2],
        ["messages", 1],
      ]) as Record<string, number>,
    );
    const second = await saver.put(first, c2, meta(1), { other: 2, messages: 1 });
    await saver.putWrites(second, [[name, "w"]], "task");
    written[name] = { ns: { id: c.id }, channels: { first } };
  }
  return written;
}

function expectRoundTrip(read: Record<string, unknown>) {
  for (const name of NAMES) {
    const got = read[name] as {
      ns: Record<string, unknown>;
      channels: Record<string, unknown>;
    };
    expect(got.ns.values).toEqual([["x", 1]]);
    expect(got.ns.config).toMatchObject({ thread_id: "ns", checkpoint_ns: name });
    expect(got.ns.writes).toEqual([["task", "x", 2]]);
    expect(got.ns.listed).toEqual([got.ns.expected]);
    const chans = got.channels;
    expect(chans.values).toEqual(
      entriesOf(
        own([
          [name, { v: 1 }],
          ["other", 2],
          ["messages", [new HumanMessage({ content: "hi", id: "1" })]],
        ]),
      ),
    );
    expect(chans.versions).toEqual(
      entriesOf(
        own([
          [name, 1],
          ["other", 2],
          ["messages", 1],
        ]),
      ),
    );
    expect(chans.prototype).toBe(true);
    expect(chans.first).toEqual(
      entriesOf(
        own([
          [name, { v: 1 }],
          ["other", 1],
        ]),
      ),
    );
    expect(chans.writes).toEqual([["task", name, "w"]]);
    expect(chans.listed).toBe(2);
  }
  expect(read.all).toBe(NAMES.length * 3);
}

describe("names that are Object.prototype keys", () => {
  for (const backend of [memoryBackend, sqliteBackend, jsonlBackend, storeBackend])
    it(`a namespace or channel named ${NAMES.join(", ")} round-trips through put, putWrites, getTuple and list (${backend.name}${backend.persistent ? ", and after reopen" : ""})`, async () => {
      const place = backend.place();
      places.push({ remove: () => backend.remove(place) });
      const saver = new DurablyCheckpointSaver(await backend.open(place));
      const written = await write(saver);
      expectRoundTrip(await readBack(saver, written));
      await saver.close();
      if (!backend.persistent) return;
      const reopened = new DurablyCheckpointSaver(await backend.open(place));
      expectRoundTrip(await readBack(reopened, written));
      await reopened.close();
    });

  it("a channel named like an Object.prototype key that has a version but no value stays without one", async () => {
    const saver = new DurablyCheckpointSaver(await memoryBackend.open("memory"));
    for (const name of NAMES) {
      const c = checkpoint(
        { x: 1 },
        own([
          ["x", 1],
          [name, 1],
        ]) as Record<string, number>,
      );
      const config = await saver.put({ configurable: { thread_id: `v-${name}` } }, c, meta(0), {
        x: 1,
      });
      const tuple = await saver.getTuple(config);
      expect(entriesOf(tuple?.checkpoint.channel_values)).toEqual([["x", 1]]);
      expect(entriesOf(tuple?.checkpoint.channel_versions)).toEqual(
        entriesOf(
          own([
            ["x", 1],
            [name, 1],
          ]),
        ),
      );
    }
    await saver.close();
  });
});
