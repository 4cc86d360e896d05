// A LangGraph chat run in its own process, for the SIGKILL tests. Prints one
// JSON line per event on stdout. Environment: LG_BACKEND, LG_PLACE, LG_MODE
// ("run": start the thread; "resume": print the stored state, then continue
// it with invoke(null)), LG_ROUNDS, LG_HANG_AT (run: the tool hangs on that
// item so the parent can kill it mid-tool; 0: never), LG_DURABILITY,
// LG_TOOL_DELAY_MS (a real tool takes time; LangGraph's "async" durability
// stores checkpoints while the next step runs, which needs the event loop).
import { HumanMessage } from "@langchain/core/messages";
import { DurablyCheckpointSaver } from "../../src/index.js";
import { chatGraph, messagesOf, transcript } from "./chat-graph.js";
import { openBackend } from "./open-backend.js";

const say = (event: Record<string, unknown>) => process.stdout.write(JSON.stringify(event) + "\n");
const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

const mode = env("LG_MODE");
const rounds = Number(env("LG_ROUNDS"));
const hangAt = Number(process.env.LG_HANG_AT ?? "0");
const durability = (process.env.LG_DURABILITY ?? "async") as "async" | "sync";
const toolDelayMs = Number(process.env.LG_TOOL_DELAY_MS ?? "0");
const saver = new DurablyCheckpointSaver(await openBackend(env("LG_BACKEND"), env("LG_PLACE")));
const graph = chatGraph(saver, rounds, {
  onModel: (round) => say({ event: "model", round }),
  onTool: async (n) => {
    say({ event: "tool", n });
    if (toolDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, toolDelayMs));
    if (mode === "run" && n === hangAt) {
      say({ event: "hang", n });
      await new Promise(() => undefined); // the parent kills the process here
    }
  },
});
const config = { configurable: { thread_id: "chat" }, recursionLimit: 1000, durability };
const input = { messages: [new HumanMessage(`look up ${rounds} items`)] };
if (mode === "run") {
  say({ event: "start", pid: process.pid });
  await graph.invoke(input, config);
} else {
  const stored = (await saver.getTuple(config)) !== undefined;
  const state = await graph.getState(config);
  say({
    event: "state",
    stored,
    next: state.next,
    messages: transcript(messagesOf(state.values)),
  });
  // Nothing stored yet (killed before the first checkpoint was written): start over.
  const result = await graph.invoke(stored ? null : input, config);
  say({ event: "done", messages: transcript(result.messages) });
}
await saver.close();
say({ event: "closed" });
