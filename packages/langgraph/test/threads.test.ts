import { HumanMessage } from "@langchain/core/messages";
import { emptyCheckpoint, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { ROOT_CONVERSATION_ID, Session, type ConversationId } from "@durably/core";
import { MemoryStorage } from "@durably/storage-memory";
import { describe, expect, it } from "vitest";
import { ChannelDoc, IndexDoc, ThreadDoc, WritesDoc } from "../src/documents.js";
import { DurablyCheckpointSaver } from "../src/index.js";

function checkpoint(values: Record<string, unknown> = {}): Checkpoint {
  const c = emptyCheckpoint();
  c.id = uuid6(-1);
  c.channel_values = values;
  c.channel_versions = Object.fromEntries(Object.keys(values).map((k) => [k, 1]));
  return c;
}
const meta = (step: number, extra: Record<string, unknown> = {}) => ({
  source: "loop" as const,
  step,
  parents: {},
  ...extra,
});

async function ids(
  saver: DurablyCheckpointSaver,
  configurable: Record<string, unknown>,
  options = {},
) {
  const out: string[] = [];
  for await (const t of saver.list({ configurable }, options)) out.push(t.checkpoint.id);
  return out;
}

describe("threads and namespaces", () => {
  it("deleting a thread removes every namespace of it, leaves the others, and its id starts fresh", async () => {
    const session = await Session.open(new MemoryStorage());
    const saver = new DurablyCheckpointSaver(session);
    const put = async (thread: string, ns: string, values: Record<string, unknown>) => {
      const c = checkpoint(values);
      const config = await saver.put(
        { configurable: { thread_id: thread, checkpoint_ns: ns } },
        c,
        meta(0),
        c.channel_versions,
      );
      await saver.putWrites(config, [["messages", "w"]], "task");
      return c.id;
    };
    await put("a", "", { messages: [new HumanMessage("hi")] });
    await put("a", "sub:1", { messages: [new HumanMessage("inner")] });
    const kept = await put("b", "", { x: 1 });

    const before = await session.snapshot(ThreadDoc, null, "a");
    const conversations = Object.values(before?.namespaces ?? {}) as ConversationId[];
    expect(conversations).toHaveLength(2);

    await saver.deleteThread("a");
    expect(await saver.getTuple({ configurable: { thread_id: "a" } })).toBeUndefined();
    expect(
      await saver.getTuple({ configurable: { thread_id: "a", checkpoint_ns: "sub:1" } }),
    ).toBeUndefined();
    expect(await ids(saver, {})).toEqual([kept]);
    // Every document of the thread is retired.
    expect(await session.snapshot(ThreadDoc, null, "a")).toBeUndefined();
    for (const conv of conversations) {
      expect(await session.snapshot(IndexDoc, conv)).toBeUndefined();
      expect(await session.snapshot(ChannelDoc, conv, "messages")).toBeUndefined();
    }

    const fresh = await put("a", "", { y: 2 });
    expect(await ids(saver, { thread_id: "a" })).toEqual([fresh]);
    const tuple = await saver.getTuple({ configurable: { thread_id: "a" } });
    expect(tuple?.checkpoint.channel_values).toEqual({ y: 2 });
    expect(tuple?.pendingWrites).toEqual([["task", "messages", "w"]]);
    expect(await ids(saver, {})).toEqual([fresh, kept]);
    // Deleting a thread that does not exist changes nothing.
    await saver.deleteThread("never-written");
    await saver.close();
    // The session was given, so the saver leaves it open.
    expect(await session.snapshot(ThreadDoc, null, "b")).toBeDefined();
    await session.close();
  });

  it("lists newest first across threads and namespaces, with before, limit and structural metadata filters", async () => {
    const saver = new DurablyCheckpointSaver(new MemoryStorage());
    const made: { id: string; thread: string; ns: string }[] = [];
    for (let i = 0; i < 9; i++) {
      const thread = `t${i % 3}`;
      const ns = i % 2 ? "child" : "";
      const c = checkpoint({ n: i });
      await saver.put(
        { configurable: { thread_id: thread, checkpoint_ns: ns } },
        c,
        meta(i, { tags: { even: i % 2 === 0 }, user: i < 5 ? "ann" : "bob" }),
        c.channel_versions,
      );
      made.push({ id: c.id, thread, ns });
    }
    const newest = [...made].reverse().map((m) => m.id);
    expect(await ids(saver, {})).toEqual(newest);
    expect(await ids(saver, { thread_id: "t1" })).toEqual(
      newest.filter((id) => made.find((m) => m.id === id)?.thread === "t1"),
    );
    expect(await ids(saver, { checkpoint_ns: "child" })).toEqual(
      newest.filter((id) => made.find((m) => m.id === id)?.ns === "child"),
    );
    expect(await ids(saver, {}, { limit: 2 })).toEqual(newest.slice(0, 2));
    const before = { configurable: { checkpoint_id: made[4]?.id } };
    expect(await ids(saver, {}, { before })).toEqual(newest.slice(5));
    expect(await ids(saver, {}, { filter: { user: "bob", tags: { even: true } } })).toEqual(
      [made[8], made[6]].map((m) => m?.id),
    );
    expect(await ids(saver, {}, { filter: { user: undefined } })).toEqual(newest);
    await saver.close();
  });

  it("shares a session with the application: its own data next to the saver's", async () => {
    const session = await Session.open(new MemoryStorage());
    const saver = new DurablyCheckpointSaver(session);
    await session.commit((tx) =>
      tx.appendEntry(ROOT_CONVERSATION_ID, { kind: "app.note", data: "mine" }),
    );
    const c = checkpoint({ x: 1 });
    await saver.put({ configurable: { thread_id: "t" } }, c, meta(0), c.channel_versions);
    const page = await session.read.scanEntries({ conversationId: ROOT_CONVERSATION_ID }, 10);
    expect(page.items.map((e) => e.kind)).toEqual(["app.note"]);
    expect(await saver.getTuple({ configurable: { thread_id: "t" } })).toBeDefined();
    await saver.close();
    await session.close();
  });

  it("keeps pending writes in replay order: task path, task id, index; special writes replace, others do not", async () => {
    const saver = new DurablyCheckpointSaver(new MemoryStorage());
    const c = checkpoint();
    const config = await saver.put({ configurable: { thread_id: "t" } }, c, meta(0), {});
    await saver.putWrites(
      config,
      [
        ["b", 1],
        ["b", 2],
      ],
      "task-b",
      "~path/2",
    );
    await saver.putWrites(config, [["a", 1]], "task-a", "~path/10");
    await saver.putWrites(config, [["a", "again"]], "task-a", "~path/10"); // a retry: kept as first stored
    await saver.putWrites(config, [["__error__", "first"]], "task-a", "~path/10");
    await saver.putWrites(config, [["__error__", "second"]], "task-a", "~path/10"); // special: replaces
    await saver.putWrites(config, [["input", "x"]], "input-task"); // no path: first
    const tuple = await saver.getTuple(config);
    expect(tuple?.pendingWrites).toEqual([
      ["input-task", "input", "x"],
      ["task-a", "__error__", "second"],
      ["task-a", "a", 1],
      ["task-b", "b", 1],
      ["task-b", "b", 2],
    ]);
    // The writes document exists per checkpoint.
    const session = await saver.session();
    const thread = await session.snapshot(ThreadDoc, null, "t");
    const conversationId = thread?.namespaces[""];
    const stored = await session.snapshot(WritesDoc, conversationId, c.id);
    expect(stored?.writes).toHaveLength(5);
    await saver.close();
  });
});
