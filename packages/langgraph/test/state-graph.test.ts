import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import { MemoryStorage } from "@durably/storage-memory";
import { describe, expect, it } from "vitest";
import { DurablyCheckpointSaver } from "../src/index.js";
import { chatGraph, transcript } from "./support/chat-graph.js";

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
    expect(transcript(result.messages)).toEqual(transcript(expected.messages));
    expect(result.messages).toHaveLength(10);

    const state = await graph.getState(config);
    expect(transcript(state.values.messages)).toEqual(transcript(expected.messages));
    const history = [];
    for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
    const referenceHistory = [];
    for await (const snapshot of reference.getStateHistory(config)) referenceHistory.push(snapshot);
    expect(
      history.map((s) => [s.next, s.metadata?.step, transcript(s.values.messages ?? [])]),
    ).toEqual(
      referenceHistory.map((s) => [s.next, s.metadata?.step, transcript(s.values.messages ?? [])]),
    );
    await saver.close();
  });
});
