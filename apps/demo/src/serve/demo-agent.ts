import {
  defineTool,
  GENERATION_TASK,
  ScriptedModel,
  TOOL_TASK,
  type ConversationId,
  type Harness,
  type HarnessOptions,
  type Model,
  type ModelEvent,
  type ModelRequest,
  type ModelStreamOptions,
  type TaskStatus,
  type Tool,
} from "@durably/core";
import { scanAll } from "../scan.js";
import {
  APPROVAL_MODEL,
  approvalModel,
  DEFAULT_NOTES_FILE,
  saveNoteTool,
} from "./approval-agent.js";

/**
 * The scripted agent the viewer can run, so there is something to watch:
 * a question; reasoning, then a call of `add`, which streams a few lines of
 * output; a first try at the answer that fails as a rate-limited provider
 * would, waited out durably; then the answer. Each is streamed slowly
 * enough to see. Its submissions carry this request id, which is how the
 * viewer tells its own runs from anyone else's.
 */
export const VIEWER_REQUEST_ID = "durably-viewer-demo";
export const VIEWER_QUESTION = "What is 2 + 3? Use the add tool.";
export const VIEWER_REASONING =
  "The question asks for a sum, and the add tool computes sums, so I will call it with 2 and 3.";
/** What the first try at the answer fails with (in every conversation, once per process). */
export const VIEWER_FAILURE = "scripted: the model is busy (rate limited), try again shortly";
export const VIEWER_ANSWER =
  "2 + 3 = 5. The add tool's result became a transcript entry in the commit that ended the call; this answer streamed as deferred progress first and became an entry when the turn ended.";

export interface DemoAgentPacing {
  /** Pause between streamed text chunks (ScriptedModel's `chunkDelayMs`). */
  chunkDelayMs: number;
  /** Pause between the lines the `add` tool streams. */
  toolStepMs: number;
  /** How long the rate-limited first try at the answer asks to wait (its `retryAfterMs`). */
  retryDelayMs: number;
}

export const DEFAULT_PACING: DemoAgentPacing = {
  chunkDelayMs: 40,
  toolStepMs: 400,
  retryDelayMs: 2500,
};

/**
 * ScriptedModel, except that the first request for the answer (turn 2) of
 * each conversation fails with a retryable error. ScriptedModel's own
 * `failures` count per model instance, so only the first conversation a
 * process answers would show a retry; this shows one in every run.
 */
class FirstAnswerRateLimited implements Model {
  readonly #failed = new Set<string>();

  constructor(
    private readonly inner: ScriptedModel,
    private readonly failure: Extract<ModelEvent, { type: "error" }>,
  ) {}

  async *stream(request: ModelRequest, options?: ModelStreamOptions): AsyncGenerator<ModelEvent> {
    const key = `${request.conversationId}:${this.inner.turnFor(request)}`;
    if (this.inner.turnFor(request) === 1 && !this.#failed.has(key)) {
      this.#failed.add(key);
      yield this.failure;
      return;
    }
    yield* this.inner.stream(request, options);
  }
}

export function viewerModel(pacing: DemoAgentPacing): Model {
  const script = new ScriptedModel(
    [
      {
        reasoning: VIEWER_REASONING,
        text: "I will add the two numbers with the add tool. ",
        toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }],
      },
      { text: VIEWER_ANSWER },
    ],
    { chunkDelayMs: pacing.chunkDelayMs },
  );
  return new FirstAnswerRateLimited(script, {
    type: "error",
    message: VIEWER_FAILURE,
    code: "rate_limited",
    retryable: true,
    retryAfterMs: pacing.retryDelayMs,
    kind: "transient",
  });
}

/**
 * What `Harness.open` gets for the viewer's agents: the `add` run's model
 * (the default) and the approval run's (`APPROVAL_MODEL`), their tools
 * (`save_note` appends to `notesFile`), room for the retry.
 */
export function viewerHarnessOptions(
  pacing: DemoAgentPacing,
  notesFile: string = DEFAULT_NOTES_FILE,
): HarnessOptions {
  return {
    models: {
      default: viewerModel(pacing),
      [APPROVAL_MODEL]: approvalModel(pacing.chunkDelayMs),
    },
    tools: [...viewerTools(pacing), saveNoteTool(notesFile)],
    settings: {
      retry: {
        maxAttempts: 5,
        initialDelayMs: pacing.retryDelayMs,
        maxDelayMs: Math.max(pacing.retryDelayMs * 8, 1000),
      },
    },
  };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** `add`, safe to rerun after a crash; it streams three lines of output while it works. */
export function viewerTools(pacing: DemoAgentPacing): Tool[] {
  return [
    defineTool<{ a: number; b: number }>({
      name: "add",
      description: "Add two numbers",
      replay: "safe",
      parameters: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      },
      execute: async ({ a, b }, api) => {
        await api.output(`checking the arguments (attempt ${api.attempt})\n`);
        await pause(pacing.toolStepMs, api.signal);
        await api.output(`adding ${a} + ${b}\n`);
        await pause(pacing.toolStepMs, api.signal);
        await api.output(`result ${a + b}\n`);
        return { content: String(a + b) };
      },
    }),
  ];
}

/** Task states that still have work to do. */
const UNFINISHED: TaskStatus[] = ["pending", "running", "waiting", "completing"];

/** Harness runs left unfinished in storage, split by whether this viewer started them. */
export interface UnfinishedRuns {
  /** Conversations whose unfinished run is the viewer's scripted agent. */
  ours: ConversationId[];
  /** Conversations whose unfinished run someone else started (another model, other tools). */
  others: ConversationId[];
}

/**
 * Starting the scheduler runs every unfinished harness task of the storage
 * with this process's model and tools. That is right for the viewer's own
 * scripted runs and wrong for anyone else's, so the viewer looks first.
 */
export async function unfinishedRuns(harness: Harness): Promise<UnfinishedRuns> {
  const conversations = new Set<ConversationId>();
  for (const status of UNFINISHED) {
    const tasks = await scanAll((limit, cursor) =>
      harness.session.read.scanTasks({ status }, limit, cursor),
    );
    for (const task of tasks)
      if (task.kind === GENERATION_TASK || task.kind === TOOL_TASK)
        conversations.add(task.conversationId);
  }
  const runs: UnfinishedRuns = { ours: [], others: [] };
  for (const id of [...conversations].sort((a, b) => a - b)) {
    const ours = await harness.session.read.submissionByRequest(id, VIEWER_REQUEST_ID);
    (ours ? runs.ours : runs.others).push(id);
  }
  return runs;
}
