import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { HumanMessage } from "@langchain/core/messages";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { copyThread } from "../examples/copy-thread.js";
import { DurablyCheckpointSaver } from "../src/index.js";
import { chatGraph, messagesOf, transcript } from "./support/chat-graph.js";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "durably-lg-examples-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("README examples", () => {
  it("the quickstart runs, and a second run continues the same thread from the file", async () => {
    const file = join(dir, "chat.sqlite");
    const args = [
      "--conditions=@durably/source",
      "--import",
      "tsx",
      "examples/quickstart.ts",
      file,
    ];
    const cwd = join(import.meta.dirname, "..");
    expect((await run(process.execPath, args, { cwd })).stdout.trim()).toBe(
      "[ 'hello', 'you said: hello' ]",
    );
    expect((await run(process.execPath, args, { cwd })).stdout.trim()).toBe(
      "[ 'hello', 'you said: hello', 'hello', 'you said: hello' ]",
    );
  }, 60_000);

  it("copies a thread from SqliteSaver, and the graph goes on from it on Durably", async () => {
    const old = SqliteSaver.fromConnString(join(dir, "langgraph.sqlite"));
    const config = { configurable: { thread_id: "chat" }, recursionLimit: 100 };
    await chatGraph(old, 3).invoke({ messages: [new HumanMessage("look up three items")] }, config);
    const saver = new DurablyCheckpointSaver(await openSqliteStorage(join(dir, "durably.sqlite")));
    expect(await copyThread(old, saver, "chat")).toBeGreaterThan(5);

    const history = async (graph: ReturnType<typeof chatGraph>) => {
      const out = [];
      for await (const s of graph.getStateHistory(config))
        out.push([s.config.configurable?.checkpoint_id, s.next, transcript(messagesOf(s.values))]);
      return out;
    };
    expect(await history(chatGraph(saver, 3))).toEqual(await history(chatGraph(old, 3)));
    // The copied thread is a live one: a new turn continues it.
    const next = await chatGraph(saver, 4).invoke(
      { messages: [new HumanMessage("and one more")] },
      config,
    );
    expect(transcript(messagesOf(next)).slice(-3)).toEqual([
      'ai: I will look up item 4. lookup({"n":4})',
      "tool: item 4 is xxxx16",
      "ai: Done: looked up 4 items.",
    ]);
    old.db.close();
    await saver.close();
  });
});
