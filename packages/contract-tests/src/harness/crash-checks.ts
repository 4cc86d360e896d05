import {
  ROOT_CONVERSATION_ID,
  type EntryRecord,
  type Storage,
  type TaskRecord,
} from "@durably/core";
import { check, checkTranscript, storedDoc, storedEntries, storedTasks } from "./invariants.js";
import type { HarnessChildMessage } from "./protocol.js";
import { PREAMBLE, PROGRESS_WINDOW_MS, RETRY_FAILURE_TEXT, type CrashScenario } from "./scripts.js";

/** Timer and IPC delays on a busy machine, on top of the progress window. */
export const SLACK_MS = 400;

type Live = {
  run: { submissionId: number } | null;
  generation: { text: string } | null;
  retry?: { taskId: number; attempt: number; retryAt: number };
  tools: Record<string, { toolName: string; output: string; attempt: number }>;
};

export const kinds = (entries: readonly EntryRecord[]): string =>
  entries.map((e) => e.kind).join(", ");

/** What the killed child reported and when it was killed. */
export interface Killed {
  scenario: CrashScenario;
  submissionId: number;
  killedAt: number;
  messages: readonly HarnessChildMessage[];
}

/** What the "retry-wait" child left: the time the stored wait ends. */
export interface StoredWait {
  retryAt: number;
}

function checkStream(killed: Killed, entries: EntryRecord[], live: Live): void {
  check(
    entries.length === 1,
    () => `stream: only the user entry may be stored mid-stream; stored: ${kinds(entries)}`,
  );
  const stored = live.generation?.text ?? "";
  check(
    PREAMBLE.startsWith(stored),
    () =>
      `stream: stored partial text is not a prefix of the stream: ${JSON.stringify(stored.slice(0, 80))}`,
  );
  const mustHave = killed.messages
    .filter((m): m is Extract<HarnessChildMessage, { type: "text" }> => m.type === "text")
    .filter((m) => m.at <= killed.killedAt - PROGRESS_WINDOW_MS - SLACK_MS)
    .reduce((max, m) => Math.max(max, m.length), 0);
  check(
    stored.length >= mustHave,
    () =>
      `stream: ${mustHave} characters were shown more than ${PROGRESS_WINDOW_MS + SLACK_MS} ms before the kill, but only ${stored.length} were stored`,
  );
}

function checkTool(scenario: CrashScenario, entries: EntryRecord[], live: Live): void {
  const name = scenario === "safe-tool" ? "fetch" : "charge";
  check(
    entries.length === 2,
    () => `${scenario}: expected the user entry and the tool call; stored: ${kinds(entries)}`,
  );
  const slot = Object.values(live.tools)[0];
  check(
    slot?.toolName === name && slot.output === `${name}: step 1 of attempt 1\n`,
    () =>
      `${scenario}: the tool slot should hold the output stored before the kill; found ${JSON.stringify(slot)}`,
  );
}

function checkRetryWait(
  killed: Killed,
  entries: EntryRecord[],
  live: Live,
  generation: TaskRecord | undefined,
): StoredWait {
  check(
    entries.length === 1,
    () =>
      `retry-wait: only the user entry may be stored during the wait; stored: ${kinds(entries)}`,
  );
  check(
    !JSON.stringify(entries).includes(RETRY_FAILURE_TEXT),
    () => "retry-wait: the failed attempt's partial output was stored as an entry",
  );
  const shown = killed.messages.find((m) => m.type === "retry-waiting");
  const state = generation?.state;
  const checkpoint =
    state?.status === "running"
      ? (state.checkpoint as { phase?: string; attempt?: number; retryAt?: number })
      : undefined;
  check(
    checkpoint?.phase === "retry" && checkpoint.attempt === 2,
    () =>
      `retry-wait: the generation should be stored running in phase "retry" for attempt 2; found ${JSON.stringify(state)}`,
  );
  check(
    shown?.type === "retry-waiting" &&
      live.retry?.attempt === 2 &&
      live.retry.retryAt === checkpoint.retryAt &&
      shown.retryAt === checkpoint.retryAt,
    () =>
      `retry-wait: live.retry ${JSON.stringify(live.retry)} and the shown wait ${JSON.stringify(shown)} should match the checkpoint's retryAt ${checkpoint?.retryAt}`,
  );
  check(
    (live.generation?.text ?? "") === "",
    () =>
      `retry-wait: the failed attempt's partial is still in live.generation: ${JSON.stringify(live.generation)}`,
  );
  return { retryAt: checkpoint.retryAt };
}

/**
 * Reads what storage kept after the kill, before anything resumes, and
 * checks it against the scenario's moment. Returns the stored retry wait
 * for "retry-wait".
 */
export async function checkStoredAfterKill(
  raw: Storage,
  killed: Killed,
): Promise<StoredWait | undefined> {
  const { scenario } = killed;
  const conversationId = ROOT_CONVERSATION_ID;
  await checkTranscript(raw, conversationId, `${scenario}: after the kill`);
  const entries = await storedEntries(raw, conversationId);
  check(
    entries[0]?.kind === "durably.user",
    () =>
      `${scenario}: the user entry (acknowledged before the kill) is missing; stored: ${kinds(entries)}`,
  );
  const live = (await storedDoc(raw, "durably.live", conversationId)) as Live | undefined;
  check(
    live?.run?.submissionId === killed.submissionId,
    () => `${scenario}: live.run lost: ${JSON.stringify(live?.run)}`,
  );
  if (scenario === "stream") checkStream(killed, entries, live);
  else if (scenario === "retry-wait") {
    const [generation] = await storedTasks(raw, conversationId, "durably.generation");
    return checkRetryWait(killed, entries, live, generation);
  } else checkTool(scenario, entries, live);
  return undefined;
}
