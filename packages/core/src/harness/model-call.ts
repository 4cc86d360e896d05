import type { ConversationId, TaskId } from "../domain/ids.js";
import type { JsonObject } from "../domain/json.js";
import type { StopReason } from "../domain/records.js";
import type { Session } from "../session/session.js";
import { AssistantDraft } from "./assistant-draft.js";
import { LiveDoc } from "./live.js";
import type { Model, ModelError, ModelRequest, ModelUsage } from "./model.js";
import { eventProblem, malformedError } from "./model-event-check.js";
import { ProgressWriter } from "./progress.js";
import { thrownModelError } from "./retry-policy.js";

/** How one model call ended: a complete answer, or a failure (with what streamed before it). */
export type CallEnd =
  | { type: "done"; draft: AssistantDraft; stopReason: StopReason; usage: ModelUsage }
  | { type: "error"; draft: AssistantDraft; error: ModelError };

/** What a model call shows while it streams (the caller's writer puts it in `durably.live`). */
export type ModelProgress =
  | { type: "begin"; attempt: number }
  | { type: "text"; delta: string }
  | { type: "reasoning"; delta: string }
  | { type: "toolCall"; call: { id: string; name: string; arguments: JsonObject } };

/** Streams a generation's partials into `live.generation` as deferred commits, batched (see ProgressWriter). */
export function generationProgress(
  session: Session,
  conversationId: ConversationId,
  taskId: TaskId,
): ProgressWriter<ModelProgress> {
  return new ProgressWriter<ModelProgress>(session, async (tx, items) => {
    const live = await tx.doc(LiveDoc, conversationId);
    for (const item of items) {
      if (item.type === "begin") {
        live.generation = {
          taskId,
          text: "",
          toolCalls: [],
          ...(item.attempt > 1 ? { attempt: item.attempt } : {}),
        };
        continue;
      }
      const generation = live.generation;
      if (generation?.taskId !== taskId) continue;
      if (item.type === "text") generation.text += item.delta;
      else if (item.type === "reasoning")
        generation.reasoning = (generation.reasoning ?? "") + item.delta;
      else generation.toolCalls.push(item.call);
    }
  });
}

/**
 * One model call: streams `model` for `request`, showing partials through
 * `progress` (deferred commits, settled before this returns, so ordered
 * before whatever the caller commits next), and builds the assistant message. A failure is
 * returned, never thrown: an error event as it is, an exception from the
 * model (thrown by `stream` itself or by its iterator) as `thrownModelError`
 * reads it, a stream without `done` or `error` as a non-retryable error,
 * a malformed event (`eventProblem`) as a non-retryable `MALFORMED_EVENT`
 * error, before any of it is kept. Only an abort of `signal` throws (its reason).
 */
export async function callModel(
  model: Model,
  request: ModelRequest,
  attempt: number,
  signal: AbortSignal,
  progress: ProgressWriter<ModelProgress>,
): Promise<CallEnd> {
  const show = (item: ModelProgress): void => void progress.push(item).catch(() => undefined);
  show({ type: "begin", attempt });
  const draft = new AssistantDraft();
  const callIds = new Set<string>();
  try {
    for await (const event of model.stream(request, { signal })) {
      // Checked before anything of it is kept: a malformed event ends the call, stored nowhere.
      const problem = eventProblem(event, callIds);
      if (problem !== undefined)
        return { type: "error", draft, error: malformedError(problem, event) };
      switch (event.type) {
        case "text":
          if (event.delta === "") break;
          draft.text(event.delta);
          show({ type: "text", delta: event.delta });
          break;
        case "reasoning":
          draft.reasoning(event);
          if (event.delta !== "") show({ type: "reasoning", delta: event.delta });
          break;
        case "toolCall": {
          callIds.add(event.id);
          const call = draft.toolCall(event);
          show({
            type: "toolCall",
            call: { id: call.id, name: call.name, arguments: call.arguments },
          });
          break;
        }
        case "done":
          return { type: "done", draft, stopReason: event.stopReason, usage: event.usage };
        case "error": {
          const { type: _type, ...error } = event;
          // Fields present as `undefined` are left out (they are not stored).
          for (const key of Object.keys(error) as (keyof ModelError)[])
            if (error[key] === undefined) delete error[key];
          // Kept with its code, kind and retry hint; the stored reason says the message was empty.
          if (error.message === "") error.message = "the model reported an error without a message";
          return { type: "error", draft, error };
        }
      }
    }
    signal.throwIfAborted();
    return {
      type: "error",
      draft,
      error: {
        message: "the model stream ended without a done or error event",
        code: "NO_END",
        kind: "invalid",
        retryable: false,
      },
    };
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    return { type: "error", draft, error: thrownModelError(error) };
  } finally {
    await progress.settle().catch(() => undefined); // ordered before whatever commits next
  }
}
