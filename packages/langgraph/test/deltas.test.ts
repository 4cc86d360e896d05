import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { MemoryStorage } from "@durably/storage-memory";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { DurablyCheckpointSaver } from "../src/index.js";
import { chatGraph } from "./support/chat-graph.js";
import {
  changesOf,
  channelDocId,
  listEdits,
  putBatches,
  recordCommits,
} from "./support/commits.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "durably-lg-deltas-"));
  dirs.push(dir);
  return dir;
};

const ask = (text: string) => ({ messages: [new HumanMessage(text)] });

describe("growing channels are stored as deltas", () => {
  for (const deltas of ["identity", "content"] as const) {
    it(`stores each step's new message as one appended item, not the whole list (deltas: ${deltas})`, async () => {
      const saver = new DurablyCheckpointSaver(new MemoryStorage(), { deltas });
      const { events } = recordCommits(await saver.session());
      await chatGraph(saver, 30).invoke(ask("look up thirty items"), {
        configurable: { thread_id: "t" },
        recursionLimit: 200,
      });

      const changes = changesOf(events, channelDocId(events, "messages"));
      const appended: number[] = [];
      let bases = 0;
      for (const change of changes) {
        if (change.content.kind === "base") {
          bases++;
          continue;
        }
        const edits = listEdits(change);
        expect(edits.removed, JSON.stringify(change.content.ops)).toBe(0);
        appended.push(edits.appended);
      }
      // 62 messages: the input, then one new message per step; a few bases, spaced geometrically.
      expect(appended.length + bases).toBe(61);
      expect(appended.every((n) => n === 1)).toBe(true);
      expect(bases).toBeLessThanOrEqual(3);

      // A put writes about as much at message 60 as at message 5.
      const sizes = putBatches(events)
        .filter(
          (e) => !e.writes.some((w) => w.type === "document.change" && w.content.kind === "base"),
        )
        .map((e) => JSON.stringify(e.writes).length);
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      expect(mean(sizes.slice(-10))).toBeLessThan(1.5 * mean(sizes.slice(2, 12)));
      await saver.close();
    });
  }

  for (const deltas of ["identity", "content"] as const)
    it(`after a restart, the first put still stores only the new messages (deltas: ${deltas})`, async () => {
      const path = join(tempDir(), "chat.sqlite");
      const config = { configurable: { thread_id: "t" } };
      const first = new DurablyCheckpointSaver(await openSqliteStorage(path), { deltas });
      const { events: firstEvents } = recordCommits(await first.session());
      await chatGraph(first, 5).invoke(ask("look up five items"), config);
      await first.close();

      const second = new DurablyCheckpointSaver(await openSqliteStorage(path), { deltas });
      const { events } = recordCommits(await second.session());
      const graph = chatGraph(second, 6);
      const result = await graph.invoke(ask("one more"), config);
      const messagesDoc = channelDocId(firstEvents, "messages");
      const edits = changesOf(events, messagesDoc).map((change) => listEdits(change));
      // "one more" (the 13th message), the AI call, the tool result, the answer: one item each.
      expect(edits).toEqual([1, 2, 3, 4].map(() => ({ removed: 0, appended: 1 })));
      expect(result.messages).toHaveLength(16);
      await second.close();
    });
});
