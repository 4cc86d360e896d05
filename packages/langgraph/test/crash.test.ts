import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import { describe, expect, inject, it } from "vitest";
import { chatGraph, transcript } from "./support/chat-graph.js";
import { startGraphChild, type ChildEvent } from "./support/child.js";
import { persistentBackend } from "./support/open-backend.js";

/*
 * A real StateGraph (MessagesAnnotation, a ToolNode, a deterministic fake
 * model) runs in a child process over a persistent Durably backend, is killed
 * with SIGKILL mid-graph, and a second process resumes the thread from the
 * last stored checkpoint and finishes it.
 */

const ROUNDS = 6;
const HANG_AT = 4;
const pgUrl = inject("pgUrl");
if (pgUrl) process.env.DURABLY_PG_URL = pgUrl;
const backends = ["sqlite", "jsonl", "store", ...(pgUrl ? ["postgres"] : [])];

async function referenceTranscript(rounds: number): Promise<string[]> {
  const result = await chatGraph(new MemorySaver(), rounds).invoke(
    { messages: [new HumanMessage(`look up ${rounds} items`)] },
    { configurable: { thread_id: "reference" }, recursionLimit: 1000 },
  );
  return transcript(result.messages);
}

const of = (events: ChildEvent[], kind: string) => events.filter((e) => e.event === kind);

describe.each(backends)("SIGKILL mid-graph on %s", (name) => {
  it("resumes from the checkpoint before the killed tool call and finishes the same conversation", async () => {
    const backend = persistentBackend(name);
    const place = backend.place();
    try {
      const expected = await referenceTranscript(ROUNDS);
      const env = {
        LG_BACKEND: name,
        LG_PLACE: place,
        LG_ROUNDS: String(ROUNDS),
        LG_DURABILITY: "sync",
      };
      const run = startGraphChild({ ...env, LG_MODE: "run", LG_HANG_AT: String(HANG_AT) });
      await run.waitFor((e) => e.event === "hang");
      run.process.kill("SIGKILL");
      expect((await run.exited).signal).toBe("SIGKILL");
      expect(of(run.events, "tool").map((e) => e.n)).toEqual([1, 2, 3, 4]);

      const resume = startGraphChild({ ...env, LG_MODE: "resume" });
      const state = await resume.waitFor((e) => e.event === "state");
      // The last checkpoint: the model asked for item 4, the tool had not answered.
      expect(state.next).toEqual(["tools"]);
      expect(state.messages).toEqual(expected.slice(0, 1 + 2 * (HANG_AT - 1) + 1));
      const done = await resume.waitFor((e) => e.event === "done");
      const exit = await resume.exited;
      expect(exit.code, exit.stderr).toBe(0);
      expect(done.messages).toEqual(expected);
      // Only the killed call and what followed it ran again; the model was not asked again for item 4.
      expect(of(resume.events, "tool").map((e) => e.n)).toEqual([4, 5, 6]);
      expect(of(resume.events, "model").map((e) => e.round)).toEqual([5, 6, 7]);
    } finally {
      backend.remove(place);
    }
  }, 120_000);

  it("killed at a random instant (LangGraph's default async durability), what is stored is a prefix of the run and the resumed run finishes it", async () => {
    const backend = persistentBackend(name);
    const place = backend.place();
    const rounds = 40;
    try {
      const expected = await referenceTranscript(rounds);
      const env = {
        LG_BACKEND: name,
        LG_PLACE: place,
        LG_ROUNDS: String(rounds),
        LG_TOOL_DELAY_MS: "5",
      };
      const run = startGraphChild({ ...env, LG_MODE: "run" });
      const killAfter = 2 + Math.floor(Math.random() * 30);
      await run.waitFor((e) => e.event === "tool" && (e.n as number) >= killAfter);
      run.process.kill("SIGKILL");
      expect((await run.exited).signal).toBe("SIGKILL");

      const resume = startGraphChild({ ...env, LG_MODE: "resume" });
      const state = await resume.waitFor((e) => e.event === "state");
      const stored = state.messages as string[];
      expect(stored, `killed after tool ${killAfter}`).toEqual(expected.slice(0, stored.length));
      // With async durability the writes may trail the run by several steps, so the
      // only stored checkpoint can be the input one: no messages yet, next is the start.
      if (state.stored && stored.length === 0) expect(state.next).toEqual(["__start__"]);
      const done = await resume.waitFor((e) => e.event === "done");
      const exit = await resume.exited;
      expect(exit.code, exit.stderr).toBe(0);
      expect(done.messages).toEqual(expected);
    } finally {
      backend.remove(place);
    }
  }, 120_000);
});
