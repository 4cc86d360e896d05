import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { MemoryStorage } from "@durably/storage-memory";
import { describe, expect, it } from "vitest";
import { DurablyCheckpointSaver } from "../src/index.js";
import { chatGraph, messagesOf, transcript } from "./support/chat-graph.js";

describe("a real StateGraph on DurablyCheckpointSaver", () => {
  it("runs a tool-calling conversation and its state reads back like MemorySaver's", async () => {
    const saver = new DurablyCheckpointSaver(new MemoryStorage());
    const config = { configurable: { thread_id: "chat" } };
    const graph = chatGraph(saver, 4);
    const result = await graph.invoke(
      { messages: [new HumanMessage("look up four items")] },
      config,
    );

    const reference = chatGraph(new MemorySaver(), 4);
    const expected = await reference.invoke(
      { messages: [new HumanMessage("look up four items")] },
      config,
    );
    expect(transcript(messagesOf(result))).toEqual(transcript(messagesOf(expected)));
    expect(result.messages).toHaveLength(10);

    const state = await graph.getState(config);
    expect(transcript(messagesOf(state.values))).toEqual(transcript(messagesOf(expected)));
    const history = [];
    for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
    const referenceHistory = [];
    for await (const snapshot of reference.getStateHistory(config)) referenceHistory.push(snapshot);
    expect(
      history.map((s) => [s.next, s.metadata?.step, transcript(messagesOf(s.values))]),
    ).toEqual(
      referenceHistory.map((s) => [s.next, s.metadata?.step, transcript(messagesOf(s.values))]),
    );
    await saver.close();
  });

  it("time travel: a branch from an older checkpoint reads back like MemorySaver's, and so does the first branch", async () => {
    const run = async (saver: BaseCheckpointSaver) => {
      const graph = chatGraph(saver, 6);
      const config = { configurable: { thread_id: "chat" }, recursionLimit: 100 };
      await graph.invoke({ messages: [new HumanMessage("look up six items")] }, config);
      const history = [];
      for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
      // Back to the checkpoint where the model had asked for item 2, and say something else there.
      const fork = history.find((s) => messagesOf(s.values).length === 4 && s.next[0] === "tools");
      const forked = await graph.updateState(fork!.config, {
        messages: [new HumanMessage("actually, stop here")],
      });
      const branch = await graph.invoke(null, { ...forked, recursionLimit: 100 });
      const all = [];
      for await (const snapshot of graph.getStateHistory(config)) all.push(snapshot);
      return {
        branch: transcript(messagesOf(branch)),
        history: all.map((s) => [s.metadata?.source, s.next, transcript(messagesOf(s.values))]),
      };
    };
    const durably = new DurablyCheckpointSaver(new MemoryStorage());
    const mine = await run(durably);
    const reference = await run(new MemorySaver());
    expect(mine.branch).toEqual(reference.branch);
    expect(mine.history).toEqual(reference.history);
    await durably.close();
  });
});
