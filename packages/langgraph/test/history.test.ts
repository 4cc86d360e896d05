import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import {
  MemorySaver,
  uuid6,
  type BaseCheckpointSaver,
  type Checkpoint,
  type CheckpointTuple,
} from "@langchain/langgraph-checkpoint";
import { Session } from "@durably/core";
import { MemoryStorage } from "@durably/storage-memory";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { DurablyCheckpointSaver } from "../src/index.js";

/*
 * Random histories, the same calls on DurablyCheckpointSaver and on
 * LangGraph's MemorySaver (which keeps every checkpoint whole): a growing
 * message list (appends, an edited message, cuts) well past one page, a
 * counter, a long growing string, bytes, branches from older checkpoints
 * (whose channel versions collide with the first branch's), pending writes
 * and a restart half way. Every checkpoint must read back the same.
 */

function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Node {
  id: string;
  values: { messages: BaseMessage[]; counter: number; notes: string; bin?: Uint8Array };
  versions: Record<string, number>;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function allTuples(saver: BaseCheckpointSaver, threadId: string): Promise<CheckpointTuple[]> {
  const out: CheckpointTuple[] = [];
  for await (const t of saver.list({ configurable: { thread_id: threadId } })) out.push(t);
  return out;
}

async function play(seed: number, steps: number, open: () => Promise<DurablyCheckpointSaver>) {
  const random = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const reference = new MemorySaver();
  let saver = await open();
  const thread = `thread-${seed}`;
  const nodes: Node[] = [];
  let n = 0;
  for (let step = 0; step < steps; step++) {
    if (step === Math.floor(steps / 2)) {
      await saver.close();
      saver = await open(); // a new process would start like this
    }
    const parent =
      nodes.length === 0
        ? undefined
        : random() < 0.9
          ? nodes[nodes.length - 1]
          : pick(nodes.slice(-20));
    const values: Node["values"] = parent
      ? { ...parent.values }
      : { messages: [], counter: 0, notes: "" };
    const versions = { ...(parent?.versions ?? {}) };
    const newVersions: Record<string, number> = {};
    const bump = (channel: string) => {
      versions[channel] = (versions[channel] ?? 0) + 1;
      newVersions[channel] = versions[channel];
    };
    const roll = random();
    if (!parent || roll < 0.7) {
      const add = 1 + Math.floor(random() * 4);
      const added = Array.from({ length: add }, () =>
        ++n % 2
          ? new HumanMessage({ content: `m${n}`, id: `id-${n}` })
          : new AIMessage({ content: `a${n}`, id: `id-${n}` }),
      );
      values.messages = [...values.messages, ...added];
      bump("messages");
    } else if (roll < 0.78 && values.messages.length > 0) {
      const at = Math.floor(random() * values.messages.length);
      values.messages = values.messages.map((m, i) =>
        i === at ? new HumanMessage({ content: `edited ${n++}`, id: m.id as string }) : m,
      );
      bump("messages");
    } else if (roll < 0.82) {
      values.messages = values.messages.slice(0, -1 - Math.floor(random() * 5));
      bump("messages");
    }
    if (!parent || random() < 0.5) {
      values.counter += 1;
      bump("counter");
    }
    if (!parent || random() < 0.3) {
      values.notes += `note ${step} `.repeat(40);
      bump("notes");
    }
    if (random() < 0.1) {
      values.bin = new Uint8Array([step % 256, 0, 255, 7]);
      bump("bin");
    }
    const id = uuid6(-1);
    const checkpoint: Checkpoint = {
      v: 4,
      id,
      ts: new Date(1_700_000_000_000 + step).toISOString(),
      channel_values: { ...values },
      channel_versions: { ...versions },
      versions_seen: { step: { messages: versions.messages ?? 0 } },
    };
    const config = {
      configurable: {
        thread_id: thread,
        checkpoint_ns: "",
        ...(parent ? { checkpoint_id: parent.id } : {}),
      },
    };
    const metadata = { source: "loop" as const, step, parents: {} };
    await (reference as BaseCheckpointSaver).put(config, checkpoint, metadata, newVersions);
    const stored = await saver.put(config, checkpoint, metadata, newVersions);
    if (random() < 0.4) {
      const writes: [string, unknown][] = [
        ["messages", [new AIMessage(`w${step}`)]],
        ["counter", step],
      ];
      const task = `task-${Math.floor(random() * 3)}`;
      await reference.putWrites(stored, writes, task);
      await saver.putWrites(stored, writes, task);
    }
    nodes.push({ id, values, versions });
  }
  const expected = await allTuples(reference, thread);
  const actual = await allTuples(saver, thread);
  expect(actual.map((t) => t.checkpoint.id)).toEqual(expected.map((t) => t.checkpoint.id));
  for (let i = 0; i < expected.length; i++) {
    const want = expected[i] as CheckpointTuple;
    const got = actual[i] as CheckpointTuple;
    const at = `seed ${seed}, checkpoint ${want.checkpoint.id}`;
    expect(got.checkpoint, at).toEqual(want.checkpoint);
    expect(got.metadata, at).toEqual(want.metadata);
    expect(got.parentConfig, at).toEqual(want.parentConfig);
    expect(got.pendingWrites, at).toEqual(want.pendingWrites);
  }
  const latest = await saver.getTuple({ configurable: { thread_id: thread } });
  expect(latest?.checkpoint.id).toBe(expected[0]?.checkpoint.id);
  await saver.close();
  return {
    checkpoints: expected.length,
    longest: Math.max(...nodes.map((x) => x.values.messages.length)),
  };
}

describe("every checkpoint of a random history reads back like MemorySaver's", () => {
  for (const seed of [1, 2])
    // 300 steps, each checkpoint compared in full: tens of seconds on a loaded 2-core machine.
    it(`on memory storage (seed ${seed})`, { timeout: 120_000 }, async () => {
      // One session across the "restart": a new saver (no caches) over it.
      const session = await Session.open(new MemoryStorage());
      const { longest } = await play(seed, 300, () =>
        Promise.resolve(new DurablyCheckpointSaver(session)),
      );
      await session.close();
      expect(longest).toBeGreaterThan(256);
    });

  it("on SQLite, reopened half way", { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "durably-lg-history-"));
    dirs.push(dir);
    const file = join(dir, "history.sqlite");
    const { checkpoints } = await play(
      7,
      300,
      async () => new DurablyCheckpointSaver(await openSqliteStorage(file)),
    );
    expect(checkpoints).toBe(300);
  });
});
