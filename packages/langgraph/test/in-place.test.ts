import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Annotation, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { uuid6, type BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { MemoryStorage } from "@durably/storage-memory";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { DurablyCheckpointSaver } from "../src/index.js";

/*
 * LangGraph hands `put` whatever array the state holds. Code that grows that
 * array in place (a node that pushes onto `state.items` and returns it, a
 * reducer that pushes instead of building a new array) passes the very same
 * object to every put: each checkpoint must still store the value it was
 * given, as MemorySaver's do.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "durably-lg-in-place-"));
  dirs.push(dir);
  return dir;
};

type Style = "node pushes onto its state" | "reducer pushes";

function pushingGraph(checkpointer: BaseCheckpointSaver, style: Style, names: string[]) {
  const State =
    style === "reducer pushes"
      ? Annotation.Root({
          items: Annotation<string[]>({
            reducer: (a, b) => {
              a.push(...b);
              return a;
            },
            default: () => [],
          }),
        })
      : Annotation.Root({ items: Annotation<string[]>() });
  const step = (name: string) => (state: { items: string[] }) => {
    if (style === "reducer pushes") return { items: [name] };
    state.items.push(name);
    return { items: state.items };
  };
  // Nodes chained in order; `as never` because the node names are built at run time.
  const graph = new StateGraph(State);
  for (const name of names) graph.addNode(name, step(name));
  graph.addEdge(START, names[0] as never);
  for (let i = 1; i < names.length; i++) graph.addEdge(names[i - 1] as never, names[i] as never);
  graph.addEdge(names[names.length - 1] as never, END);
  return graph.compile({ checkpointer });
}

/**
 * The `items` of every checkpoint that has a version of the channel, newest
 * first, as the saver reads them back. (A checkpoint taken before the channel
 * got its first version holds no value of it here, where MemorySaver keeps the
 * reducer's default: the saver stores only channels with versions.)
 */
async function storedHistory(saver: BaseCheckpointSaver, threadId: string): Promise<unknown[]> {
  const history: unknown[] = [];
  for await (const tuple of saver.list({ configurable: { thread_id: threadId } }))
    if (tuple.checkpoint.channel_versions.items !== undefined)
      history.push(tuple.checkpoint.channel_values.items);
  return history;
}

const STYLES: Style[] = ["node pushes onto its state", "reducer pushes"];

describe("arrays grown in place are stored as they are at each put", () => {
  for (const style of STYLES)
    for (const deltas of ["identity", "content"] as const)
      it(`${style} (deltas: ${deltas}): every checkpoint holds the items it was given`, async () => {
        const config = { configurable: { thread_id: "t" } };
        const reference = new MemorySaver();
        const expected = await pushingGraph(reference, style, ["a", "b", "c"]).invoke(
          { items: ["start"] },
          { ...config, durability: "sync" },
        );

        const saver = new DurablyCheckpointSaver(new MemoryStorage(), { deltas });
        const result = await pushingGraph(saver, style, ["a", "b", "c"]).invoke(
          { items: ["start"] },
          { ...config, durability: "sync" },
        );
        expect(result.items).toEqual(["start", "a", "b", "c"]);
        expect(result.items).toEqual(expected.items);
        const history = await storedHistory(saver, "t");
        expect(history).toEqual(await storedHistory(reference, "t"));
        expect(history).toEqual([
          ["start", "a", "b", "c"],
          ["start", "a", "b"],
          ["start", "a"],
          ["start"],
        ]);
        await saver.close();
      });

  it("after a restart, an array getTuple handed out and then grown in place has its new items stored (deltas: identity)", async () => {
    const path = join(tempDir(), "in-place.sqlite");
    const config = { configurable: { thread_id: "t" } };
    const first = new DurablyCheckpointSaver(await openSqliteStorage(path));
    await pushingGraph(first, "node pushes onto its state", ["a", "b"]).invoke(
      { items: ["input"] },
      { ...config, durability: "sync" },
    );
    await first.close();

    // A new process reads the latest checkpoint, pushes onto the array it was handed and puts it.
    const second = new DurablyCheckpointSaver(await openSqliteStorage(path));
    const tuple = await second.getTuple(config);
    if (tuple === undefined) throw new Error("no checkpoint stored");
    const items = tuple.checkpoint.channel_values.items as string[];
    expect(items).toEqual(["input", "a", "b"]);
    items.push("c");
    const version = Number(tuple.checkpoint.channel_versions.items) + 1;
    await second.put(
      tuple.config,
      {
        ...tuple.checkpoint,
        id: uuid6(-1),
        channel_values: { items },
        channel_versions: { ...tuple.checkpoint.channel_versions, items: version },
      },
      { source: "update", step: 3, parents: {} },
      { items: version },
    );
    await second.close();

    const third = new DurablyCheckpointSaver(await openSqliteStorage(path));
    const latest = await third.getTuple(config);
    expect(latest?.checkpoint.channel_values.items).toEqual(["input", "a", "b", "c"]);
    await third.close();
  });

  it("a put given an array that another put then grows in place stores the items it was given (deltas: identity)", async () => {
    const saver = new DurablyCheckpointSaver(new MemoryStorage());
    const items: string[] = ["start"];
    const base = {
      v: 4,
      ts: new Date(0).toISOString(),
      channel_values: { items },
      channel_versions: { items: 1 },
      versions_seen: {},
    };
    let config = await saver.put(
      { configurable: { thread_id: "t", checkpoint_ns: "" } },
      { ...base, id: "00000000-0000-0000-0000-000000000001" },
      { source: "input", step: -1, parents: {} },
      { items: 1 },
    );
    items.push("a");
    config = await saver.put(
      config,
      { ...base, id: "00000000-0000-0000-0000-000000000002", channel_versions: { items: 2 } },
      { source: "loop", step: 0, parents: {} },
      { items: 2 },
    );
    // Grown again while the next put is being planned: that put stores what it was given.
    const third = saver.put(
      config,
      { ...base, id: "00000000-0000-0000-0000-000000000003", channel_versions: { items: 3 } },
      { source: "loop", step: 1, parents: {} },
      { items: 3 },
    );
    items.push("b");
    await third;
    expect(await storedHistory(saver, "t")).toEqual([["start", "a"], ["start", "a"], ["start"]]);
    await saver.close();
  });
});
