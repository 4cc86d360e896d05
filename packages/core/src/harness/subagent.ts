import type { ConversationId, SubmissionId, TaskId } from "../domain/ids.js";
import type { ContentPart, SubmissionRecord } from "../domain/records.js";
import type { Session } from "../session/session.js";
import type { TaskDefinition } from "../tasks/define-task.js";
import { AgentDoc, applyAgentChange, checkAgentConfig, type AgentConfig } from "./agent.js";
import { checkContent } from "./content.js";
import { LiveDoc } from "./live.js";
import { checkKeys } from "../domain/option-keys.js";
import type { GenerationCheckpoint } from "./generation-task.js";
import { placeInput, type GenerationInput } from "./placement.js";
import type { ToolApi } from "./tool.js";

/** What `api.runConversation` takes: the child's agent configuration and its input. */
export interface SubagentRequest {
  /** As `conversation.configure` takes it (model, tools, instructions, settings, hooks); names are checked. */
  agent?: AgentConfig;
  input: string | ContentPart[];
}

/** What `api.runConversation` resolves with: the child conversation and its answer. */
export interface SubagentResult {
  readonly conversationId: ConversationId;
  readonly submissionId: SubmissionId;
  /** The settled submission of the child's input. */
  readonly submission: SubmissionRecord;
  /** The answer's text (`""` when the child's run settled unanswered). */
  readonly text: string;
}

/** What `runConversation` needs of its harness. */
export interface SubagentDeps {
  readonly session: Session;
  /** The generation definition (a getter: the tool task is defined before it). */
  generation(): TaskDefinition<GenerationInput, GenerationCheckpoint>;
  readonly registry: {
    models: ReadonlySet<string>;
    tools: ReadonlySet<string>;
    hooks: ReadonlySet<string>;
  };
}

type Created = { conversationId: number; submissionId: number; taskId: number };

/**
 * `api.runConversation` of one tool run: creates a child conversation
 * owned by the tool's task, with its agent configuration and its input
 * placed, in ONE keyed commit (so a safe tool rerun after a crash finds the
 * same child, never a second one), then waits for the child's run and
 * resolves with its answer. The child's generation is owned by the tool's
 * task: aborting the parent aborts it; a crash resumes it.
 */
export function subagentRunner(
  deps: SubagentDeps,
  api: Pick<ToolApi, "commit" | "signal">,
  toolTaskId: TaskId,
  waitForTask: (id: TaskId, signal: AbortSignal) => Promise<unknown>,
): (request: SubagentRequest) => Promise<SubagentResult> {
  let calls = 0;
  return async (request) => {
    checkKeys(request, ["agent", "input"], "api.runConversation", {
      path: "request",
      what: "a request field",
    });
    const change = checkAgentConfig(request.agent ?? {}, deps.registry);
    const content = checkContent(request.input, "api.runConversation: input");
    calls += 1;
    const generation = deps.generation();
    const created = await api.commit<Created>(
      async (tx) => {
        const child = await tx.createConversation({
          ownership: { kind: "task", taskId: toolTaskId },
        });
        const submission = await tx.createSubmission(child.id, { type: "input", content });
        applyAgentChange(await tx.doc(AgentDoc, child.id), change);
        const live = await tx.doc(LiveDoc, child.id);
        await placeInput(tx, generation, live, child.id, submission.id, content, undefined, {
          kind: "task",
          taskId: toolTaskId,
        });
        return {
          conversationId: child.id,
          submissionId: submission.id,
          taskId: (live.run as { taskId: number }).taskId,
        };
      },
      { key: `subagent:${calls}` },
    );
    await waitForTask(created.taskId as TaskId, api.signal);
    const submission = await deps.session.read.submission(created.submissionId as SubmissionId);
    if (!submission)
      throw new Error(`internal: the subagent's submission ${created.submissionId} is missing`);
    let text = "";
    if (submission.status === "done" && submission.answer !== undefined) {
      const entry = await deps.session.read.entry(submission.answer);
      const message = entry?.entry.model?.[0];
      if (message?.role === "assistant")
        text = message.content.map((p) => (p.type === "text" ? p.text : "")).join("");
    }
    return {
      conversationId: created.conversationId as ConversationId,
      submissionId: created.submissionId as SubmissionId,
      submission,
      text,
    };
  };
}
