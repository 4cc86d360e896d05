import {
  contentText,
  Harness,
  ROOT_CONVERSATION_ID as ROOT,
  type ConversationId,
  type Storage,
} from "@durably/core";
import { kinds } from "./crash-checks.js";
import { check, checkTranscript, storedEntries, storedTasks } from "./invariants.js";
import type { HarnessChildMessage } from "./protocol.js";
import {
  delegateTool,
  HELPER_ANSWER,
  helperScript,
  scenarioScript,
  scenarioTools,
  type HarnessModelFactory,
} from "./scripts.js";

/** What storage kept after the kill: the child conversation and its unfinished run, no answer anywhere. */
export async function checkSubagentStored(
  raw: Storage,
  messages: readonly HarnessChildMessage[],
): Promise<ConversationId> {
  const created = messages.find((m) => m.type === "subagent-created");
  check(
    created?.type === "subagent-created",
    () => "subagent: the child never reported its subagent's conversation",
  );
  const child = created.conversationId as ConversationId;
  await checkTranscript(raw, ROOT, "subagent: after the kill");
  const parent = await storedEntries(raw, ROOT);
  check(
    kinds(parent) === "durably.user, durably.assistant",
    () => `subagent: the parent's transcript after the kill is ${kinds(parent)}`,
  );
  const childEntries = await storedEntries(raw, child);
  check(
    kinds(childEntries) === "durably.user",
    () => `subagent: the subagent's transcript after the kill is ${kinds(childEntries)}`,
  );
  const [generation] = await storedTasks(raw, child, "durably.generation");
  check(
    generation !== undefined && generation.state.status !== "terminal",
    () =>
      `subagent: its generation must be stored unfinished; found ${JSON.stringify(generation?.state)}`,
  );
  return child;
}

/**
 * Resumes in this process: the delegate tool reruns (replay "safe"), finds
 * the same subagent (a keyed commit) and waits for its resumed run; the
 * parent is answered once, the subagent answers once, no second child.
 */
export async function resumeSubagentCrash(
  open: () => Promise<Storage>,
  id: string,
  models: HarnessModelFactory,
  child: ConversationId,
): Promise<void> {
  const attempts: number[] = [];
  const harness = await Harness.open(await open(), {
    models: {
      default: models(scenarioScript("subagent", "parent", id)),
      helper: models(helperScript("parent", id)),
    },
    tools: [
      ...scenarioTools("parent", { running: () => undefined, executed: () => undefined }),
      delegateTool((attempt) => attempts.push(attempt)),
    ],
  });
  try {
    const root = await harness.root();
    const [input] = await root.submissions();
    const settled = await input?.wait();
    await harness.whenIdle();
    check(settled?.status === "done", () => `subagent: the run settled ${JSON.stringify(settled)}`);
    const entries = await root.entries();
    check(
      kinds(entries) === "durably.user, durably.assistant, durably.tool-result, durably.assistant",
      () => `subagent: the parent's transcript is ${kinds(entries)}`,
    );
    const result = entries[2]?.model?.[0];
    check(
      result?.role === "toolResult" &&
        contentText(result.content) === `helper says: ${HELPER_ANSWER.slice(0, 10)}`,
      () => `subagent: the tool result is ${JSON.stringify(result)}`,
    );
    check(
      JSON.stringify(attempts) === "[2]",
      () =>
        `subagent: the delegate tool ran attempts ${JSON.stringify(attempts)} after the restart`,
    );
    const conversations = (await harness.session.read.scanConversations({}, 10)).items;
    check(
      conversations.length === 2 && conversations[1]?.id === child,
      () =>
        `subagent: conversations ${JSON.stringify(conversations.map((c) => c.id))}; expected the root and subagent ${child} only`,
    );
    const helper = await harness.conversation(child);
    const childEntries = await helper.entries();
    const answer = childEntries[1]?.model?.[0];
    check(
      kinds(childEntries) === "durably.user, durably.assistant" &&
        answer?.role === "assistant" &&
        answer.content.map((p) => (p.type === "text" ? p.text : "")).join("") === HELPER_ANSWER,
      () => `subagent: the subagent's transcript is ${kinds(childEntries)}`,
    );
  } finally {
    await harness.close();
  }
}
