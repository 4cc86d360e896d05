import { copyJson, type Json } from "../domain/json.js";
import type { TaskRecord } from "../domain/records.js";
import type { Session } from "../session/session.js";
import type { Transaction } from "../session/transaction.js";
import type { TaskRuntime } from "../tasks/runtime.js";
import { memoEntry } from "../tasks/memo.js";
import { LiveDoc, startAttempt } from "./live.js";
import { ProgressWriter } from "./progress.js";
import type { ToolApi, ToolCommitOptions } from "./tool.js";
import { appendBounded, type ToolOutputBound } from "./tool-output.js";
import type { ToolCheckpoint, ToolTaskInput } from "./tool-task.js";
import { subagentRunner, type SubagentDeps } from "./subagent.js";

type ToolRuntime = TaskRuntime<ToolTaskInput, ToolCheckpoint>;

/** Where `api.commit` records a keyed commit, and `api.memo` its memos, in the tool task's memos. */
const COMMIT_KEY = (key: string): string => `commit:${key}`;
const MEMO_KEY = (key: string): string => `memo:${key}`;

function checkKey(key: unknown, what: string): string {
  if (typeof key !== "string" || key === "")
    throw new TypeError(`${what}: key must be a non-empty string`);
  return key;
}

/** A tool call's `api` and the writer behind `api.output` (the caller settles it when the call ends). */
export function toolApi(
  session: Session,
  rt: ToolRuntime,
  attempt: number,
  bound: Required<ToolOutputBound>,
  subagents?: SubagentDeps,
): { api: ToolApi; output: ProgressWriter<string> } {
  const task = rt.task;
  const key = String(task.id);
  const conversationId = task.conversationId;
  // A safe rerun's slot keeps the crashed attempt's number and output until the rerun writes (see
  // `createToolTask`): the first write replaces both, in the commit that stores the new output, so
  // the slot always shows one attempt's output with that attempt's number (which streams rely on).
  let written = false;
  const output = new ProgressWriter<string>(session, async (tx, texts) => {
    const live = await tx.doc(LiveDoc, conversationId);
    const slot = live.tools[key];
    if (!slot) return;
    if (!written) startAttempt(slot, attempt);
    written = true;
    const next = appendBounded(slot.output, slot.outputCut, texts.join(""), bound);
    slot.output = next.output;
    if (next.cut && next.cut.chars !== slot.outputCut?.chars) slot.outputCut = next.cut;
  });

  /** Results of keyed commits made by this run (the task record `rt` holds misses them: see `commit`). */
  const committed = new Map<string, Json | undefined>();

  const api: ToolApi = {
    signal: rt.signal,
    toolCallId: task.input.toolCallId,
    conversationId,
    attempt,
    output: (text) => {
      if (typeof text !== "string")
        return Promise.reject(new TypeError("api.output: text must be a string"));
      return output.push(text);
    },
    commit: async <T>(
      fn: (tx: Transaction) => T | Promise<T>,
      options: ToolCommitOptions = {},
    ): Promise<T> => {
      if (typeof fn !== "function") throw new TypeError("api.commit: fn must be a function");
      const memoKey =
        options.key === undefined ? undefined : COMMIT_KEY(checkKey(options.key, "api.commit"));
      if (memoKey !== undefined) {
        if (committed.has(memoKey)) return committed.get(memoKey) as T;
        const known = memoEntry(rt.task.memos, memoKey);
        if (known?.status === "done") return known.value as T;
      }
      await output.settle(); // the output so far goes first on the line
      let value: T | undefined;
      let stored: Json | undefined;
      await rt.commit(async (tx, current) => {
        value = await fn(tx);
        if (memoKey === undefined) return undefined;
        stored =
          value === undefined
            ? undefined
            : copyJson(value, `api.commit result (key ${JSON.stringify(options.key)})`);
        // Recorded in the same commit as fn's writes: a rerun finds it and skips fn.
        const record: TaskRecord = {
          ...current.record,
          memos: {
            ...current.record.memos,
            [memoKey]:
              stored === undefined ? { status: "done" } : { status: "done", value: stored },
          },
        };
        await tx.putTask(record);
        return undefined;
      });
      if (memoKey !== undefined) committed.set(memoKey, stored);
      return value as T;
    },
    memo: (memoKey, fn, options) => rt.memo(MEMO_KEY(checkKey(memoKey, "api.memo")), fn, options),
    runConversation: (request) => runSubagent(request),
  };
  const runSubagent = subagents
    ? subagentRunner(subagents, api, rt.taskId, (id, signal) => rt.waitForTask(id, { signal }))
    : () => Promise.reject(new Error("api.runConversation: this tool runs outside a harness"));
  return { api, output };
}
