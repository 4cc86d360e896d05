import { defineTool, ScriptedModel, type Tool, type ToolApi } from "@durably/core";

/** The question the scripted agent is asked, and the request id that makes a retried submit the same one. */
export const QUESTION = "What is 2 + 3?";
export const REQUEST_ID = "agent-question";
/** The killed child stores streamed tool output this soon, so the parent can show it. */
export const CHILD_PROGRESS_MS = 20;

/**
 * Turn 1 calls `add`, turn 2 answers. ScriptedModel picks the turn from the
 * request (how many assistant messages it holds), so a process that resumes
 * after a crash gets the same turn the dead one would have.
 */
export function agentModel(): ScriptedModel {
  return new ScriptedModel([
    { text: "Let me add them. ", toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] },
    { text: "2 + 3 = 5" },
  ]);
}

export interface AddToolHooks {
  /** Called on every run of the tool, with its attempt (1, then 2 for a rerun after a crash). */
  ran?(attempt: number): void;
  /** The killed child's copy: called after the first output line, then the tool waits until aborted. */
  pause?(api: ToolApi): void;
}

/**
 * The `add` tool. `replay: "safe"` (adding has no side effect), so a call
 * killed mid-way reruns on resume.
 */
export function addTool(hooks: AddToolHooks = {}): Tool {
  return defineTool<{ a: number; b: number }>({
    name: "add",
    description: "Add two numbers",
    replay: "safe",
    parameters: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
    execute: async ({ a, b }, api) => {
      hooks.ran?.(api.attempt);
      await api.output(`adding ${a} + ${b} (attempt ${api.attempt})\n`);
      if (hooks.pause !== undefined) {
        hooks.pause(api);
        await new Promise<never>((_resolve, reject) =>
          api.signal.addEventListener("abort", () => reject(api.signal.reason as Error), {
            once: true,
          }),
        );
      }
      return { content: String(a + b) };
    },
  });
}
