import { defineTool, ScriptedModel, type JsonObject, type Tool, type ToolApi } from "@durably/core";

/** The crash scenarios: where the child is when it is killed. */
export type CrashScenario = "stream" | "safe-tool" | "unsafe-tool";

export const REQUEST_ID = "crash-question";
export const QUESTION = "What is 2+3?";
/** How much streamed output is stored at the latest this long after it was shown. */
export const PROGRESS_WINDOW_MS = 100;
/** Words of the streamed preamble in the "stream" scenario (one chunk each). */
export const PREAMBLE_WORDS = 400;

export const PREAMBLE = Array.from({ length: PREAMBLE_WORDS }, (_, i) => `w${i} `).join("");

/**
 * The scripted model of a scenario: turn 1 (streamed) calls a tool, turn 2
 * answers. The child streams slowly so it can be killed mid-stream; the
 * parent, resuming, streams at full speed. Which turn answers depends only
 * on the request (ScriptedModel), so a rerun after the kill gets the same one.
 */
export function scenarioModel(scenario: CrashScenario, side: "child" | "parent"): ScriptedModel {
  const tool = scenario === "stream" ? "add" : scenario === "safe-tool" ? "fetch" : "charge";
  const args: JsonObject = scenario === "stream" ? { a: 2, b: 3 } : { amount: 5 };
  return new ScriptedModel(
    [
      {
        text: scenario === "stream" ? PREAMBLE : "calling ",
        toolCalls: [{ name: tool, arguments: args }],
      },
      { text: "2 + 3 = 5" },
    ],
    side === "child" && scenario === "stream"
      ? { chunkSize: 3, chunkDelayMs: 3 }
      : { chunkSize: 3 },
  );
}

/** Hooks the child's tools call so the parent knows when to kill. */
export interface ToolHooks {
  /** Called once the tool's first output was sent, before it blocks. */
  running(name: string, api: ToolApi): void;
  /** Called when the parent's copy of an unsafe tool runs (it must never run again). */
  executed(name: string, attempt: number): void;
}

function blockUntilAborted(api: ToolApi): Promise<never> {
  return new Promise((_resolve, reject) => {
    api.signal.addEventListener("abort", () => reject(api.signal.reason as Error), { once: true });
  });
}

/**
 * The tools of every scenario. In the child, `fetch` (safe) and `charge`
 * (unsafe) stream a line of output and then block until killed; in the
 * parent they finish at once, reporting the attempt.
 */
export function scenarioTools(side: "child" | "parent", hooks: ToolHooks): Tool[] {
  const add = defineTool<{ a: number; b: number }>({
    name: "add",
    description: "Add two numbers",
    parameters: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
    replay: "safe",
    execute: ({ a, b }) => ({ content: String(a + b) }),
  });
  const slow = (name: string, replay: "safe" | "unsafe"): Tool =>
    defineTool({
      name,
      description: `${name} something (${replay})`,
      parameters: {
        type: "object",
        properties: { amount: { type: "number" } },
        required: ["amount"],
      },
      replay,
      execute: async (_args, api) => {
        hooks.executed(name, api.attempt);
        await api.output(`${name}: step 1 of attempt ${api.attempt}\n`);
        if (side === "child") {
          hooks.running(name, api);
          return blockUntilAborted(api);
        }
        return { content: `${name} finished on attempt ${api.attempt}` };
      },
    });
  return [add, slow("fetch", "safe"), slow("charge", "unsafe")];
}
