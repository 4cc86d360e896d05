import {
  defineDoc,
  defineTool,
  ScriptedModel,
  type JsonObject,
  type Model,
  type ScriptedModelOptions,
  type ScriptedTurn,
  type Tool,
  type ToolApi,
} from "@durably/core";

/** The crash scenarios: where the child is when it is killed. */
export type CrashScenario =
  | "stream"
  | "safe-tool"
  | "unsafe-tool"
  | "retry-wait"
  | "compaction"
  | "tool-commit"
  | "approval"
  | "approval-retry"
  | "subagent";

/** The request id of the decision the "approval-retry" child stores and the parent retries. */
export const APPROVAL_REQUEST_ID = "approve-deploy";

/** The summary the "compaction" scenario's model gives: long enough to kill the child while it streams. */
export const CRASH_SUMMARY = `The user asked two questions (q1, q2) and both were answered. ${Array.from({ length: 150 }, (_, i) => `fact${i}`).join(" ")}.`;

/** The questions the "compaction" child asks before it compacts. */
export const COMPACTION_QUESTIONS = ["q1", "q2"] as const;

/** The app document the "tool-commit" scenario's tool writes through `api.commit`. */
export const Bookings = defineDoc<{ items: string[] }, "conversation">({
  kind: "app.bookings",
  version: 1,
  scope: "conversation",
  initial: () => ({ items: [] }),
});

/**
 * What a scenario's model answers: scripted turns (`ScriptedModel`'s
 * rules), and how fast they stream. `id` is unique per scenario run and
 * the same in a crash child and in the parent that resumes it, so a model
 * server can count scripted failures across both processes.
 */
export interface ModelScript {
  readonly id: string;
  readonly turns: readonly ScriptedTurn[];
  readonly options?: ScriptedModelOptions;
}

/**
 * Makes the model a scenario runs: by default a `ScriptedModel`; a model
 * adapter's tests pass one that answers the same script through the
 * adapter (e.g. over a local HTTP server), so the whole harness suite runs
 * through it.
 */
export type HarnessModelFactory = (script: ModelScript) => Model;

export const scriptedModels: HarnessModelFactory = (script) =>
  new ScriptedModel(script.turns, script.options);

/** A fresh script id. */
export function scriptId(name: string): string {
  return `${name}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** The retry settings of a crash child: a wait long enough to be killed in, whatever the jitter. */
export const CHILD_RETRY = { initialDelayMs: 4_000, maxDelayMs: 8_000 };

/** The failure that sends the "retry-wait" child into its retry wait (a partial answer, then a cut). */
export const RETRY_FAILURE_TEXT = "a partial answer the failure cuts short ";

export const REQUEST_ID = "crash-question";
export const QUESTION = "What is 2+3?";
/** How much streamed output is stored at the latest this long after it was shown. */
export const PROGRESS_WINDOW_MS = 100;
/** Words of the streamed preamble in the "stream" scenario (one chunk each). */
export const PREAMBLE_WORDS = 400;

export const PREAMBLE = Array.from({ length: PREAMBLE_WORDS }, (_, i) => `w${i} `).join("");

/**
 * The script of a crash scenario: turn 1 (streamed) calls a tool, turn 2
 * answers. The child streams slowly so it can be killed mid-stream; the
 * parent, resuming, streams at full speed. In "retry-wait" the child's
 * first call fails retryably (after a partial answer), so the child is
 * killed while it waits to retry; the parent's script has no failure.
 * Which turn answers depends only on the request, so a rerun after the
 * kill gets the same one.
 */
export function scenarioScript(
  scenario: CrashScenario,
  side: "child" | "parent",
  id: string,
): ModelScript {
  if (scenario === "compaction")
    return {
      id,
      turns: [{ text: "a1" }, { text: "a2" }, { text: "a3" }],
      options:
        side === "child"
          ? { summary: CRASH_SUMMARY, chunkSize: 3, chunkDelayMs: 3 }
          : { summary: CRASH_SUMMARY, chunkSize: 3 },
    };
  if (scenario === "approval" || scenario === "approval-retry")
    return {
      id,
      turns: [
        { text: "deploying ", toolCalls: [{ name: "deploy", arguments: { env: "prod" } }] },
        { text: "deploy finished" },
      ],
      options: { chunkSize: 3 },
    };
  if (scenario === "subagent")
    return {
      id,
      turns: [
        { text: "asking ", toolCalls: [{ name: "delegate", arguments: { question: "2+3?" } }] },
        { text: "the helper worked it out" },
      ],
      options: { chunkSize: 3 },
    };
  if (scenario === "tool-commit")
    return {
      id,
      turns: [
        { text: "booking ", toolCalls: [{ name: "book", arguments: {} }] },
        { text: "2 + 3 = 5" },
      ],
      options: { chunkSize: 3 },
    };
  const tool = scenario === "safe-tool" ? "fetch" : scenario === "unsafe-tool" ? "charge" : "add";
  const args: JsonObject = tool === "add" ? { a: 2, b: 3 } : { amount: 5 };
  const first: ScriptedTurn = {
    text: scenario === "stream" ? PREAMBLE : "calling ",
    toolCalls: [{ name: tool, arguments: args }],
  };
  if (scenario === "retry-wait" && side === "child")
    first.failures = [
      { message: "overloaded", retryable: true, kind: "transient", text: RETRY_FAILURE_TEXT },
    ];
  return {
    id,
    turns: [first, { text: "2 + 3 = 5" }],
    options:
      side === "child" && scenario === "stream"
        ? { chunkSize: 3, chunkDelayMs: 3 }
        : { chunkSize: 3 },
  };
}

/** Hooks the child's tools call so the parent knows when to kill. */
export interface ToolHooks {
  /** Called once the tool's first output was sent, before it blocks. */
  running(name: string, api: ToolApi): void;
  /** Called when the parent's copy of an unsafe tool runs (it must never run again). */
  executed(name: string, attempt: number): void;
  /** Called inside the "book" tool's second `api.commit`, before the child's copy blocks in it. */
  committing?(): void;
  /** Called each time the "book" tool really runs an effect (a commit callback or its memo). */
  effect?(what: string, attempt: number): void;
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
  return [add, slow("fetch", "safe"), slow("charge", "unsafe"), bookTool(side, hooks)];
}

/**
 * "book" (safe): commits "first" (key), takes a memo, then commits
 * "second" (key); the child's copy blocks inside that second commit
 * callback, so the child is killed in the middle of an `api.commit`.
 */
function bookTool(side: "child" | "parent", hooks: ToolHooks): Tool {
  const book = (item: string) => async (api: ToolApi, block: boolean) =>
    api.commit(
      async (tx) => {
        hooks.effect?.(`commit ${item}`, api.attempt);
        (await tx.doc(Bookings, api.conversationId)).items.push(item);
        await tx.appendEntry(api.conversationId, { kind: "app.booked", data: { item } });
        if (block) {
          hooks.committing?.();
          await new Promise<never>(() => undefined); // held in the commit until the kill
        }
      },
      { key: item },
    );
  return defineTool({
    name: "book",
    description: "Book in two steps",
    parameters: { type: "object" },
    replay: "safe",
    execute: async (_args, api) => {
      await book("first")(api, false);
      const ref = await api.memo("ref", () => {
        hooks.effect?.("memo ref", api.attempt);
        return `ref-${api.attempt}`;
      });
      await book("second")(api, side === "child");
      return { content: `booked with ${ref}` };
    },
  });
}

/**
 * "deploy" (safe, approval "always"): calls `effect` each time it really
 * deploys. The child's copy blocks before any effect, so only the parent's
 * runs count: a decision applied once deploys exactly once.
 */
export function deployTool(side: "child" | "parent", effect: (env: string) => void): Tool {
  return defineTool<{ env: string }>({
    name: "deploy",
    description: "Deploys to an environment (asks a person first)",
    parameters: { type: "object", properties: { env: { type: "string" } }, required: ["env"] },
    replay: "safe",
    approval: "always",
    execute: async ({ env }, api) => {
      if (side === "child") return blockUntilAborted(api);
      effect(env);
      return { content: `deployed to ${env}` };
    },
  });
}

/** What the "subagent" scenario's helper answers: long enough to kill the child while it streams. */
export const HELPER_ANSWER = `2 + 3 = 5. ${Array.from({ length: 300 }, (_, i) => `n${i}`).join(" ")}`;

/** The helper model's script: slow in the crash child, at full speed in the parent that resumes. */
export function helperScript(side: "child" | "parent", id: string): ModelScript {
  return {
    id: `${id}-helper`,
    turns: [{ text: HELPER_ANSWER }],
    options: side === "child" ? { chunkSize: 3, chunkDelayMs: 3 } : { chunkSize: 3 },
  };
}

/**
 * "delegate" (safe): asks a subagent on the "helper" model (no tools) and
 * returns its answer; `ran` is told each attempt.
 */
export function delegateTool(ran: (attempt: number) => void): Tool {
  return defineTool<{ question: string }>({
    name: "delegate",
    description: "Asks a helper agent",
    parameters: {
      type: "object",
      properties: { question: { type: "string" } },
      required: ["question"],
    },
    replay: "safe",
    execute: async ({ question }, api) => {
      ran(api.attempt);
      const result = await api.runConversation({
        agent: { model: "helper", tools: [] },
        input: question,
      });
      return { content: `helper says: ${result.text.slice(0, 10)}` };
    },
  });
}
