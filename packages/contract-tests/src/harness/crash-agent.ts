import {
  COMPACTION_ENTRY,
  Harness,
  ROOT_CONVERSATION_ID as ROOT,
  SUMMARY_PREFIX,
  type Storage,
} from "@durably/core";
import { kinds } from "./crash-checks.js";
import { check, checkTranscript, storedDoc, storedEntries, storedTasks } from "./invariants.js";
import { describeMessages, recording } from "./recording.js";
import {
  CRASH_SUMMARY,
  scenarioScript,
  scenarioTools,
  type CrashScenario,
  type HarnessModelFactory,
} from "./scripts.js";

/** The crash scenarios of the agent runtime: a compaction and a tool's `api.commit`. */
export type AgentCrash = Extract<CrashScenario, "compaction" | "tool-commit">;

export function isAgentCrash(scenario: CrashScenario): scenario is AgentCrash {
  return scenario === "compaction" || scenario === "tool-commit";
}

/** What storage kept after the kill, before anything resumes. */
export async function checkAgentStored(raw: Storage, scenario: AgentCrash): Promise<void> {
  await checkTranscript(raw, ROOT, `${scenario}: after the kill`);
  const entries = await storedEntries(raw, ROOT);
  if (scenario === "compaction") {
    check(
      kinds(entries) === "durably.user, durably.assistant, durably.user, durably.assistant",
      () =>
        `compaction: killed mid-summary, the transcript must be the two answered turns and no marker; stored: ${kinds(entries)}`,
    );
    const [task] = await storedTasks(raw, ROOT, "durably.compaction");
    check(
      task !== undefined && task.state.status !== "terminal",
      () =>
        `compaction: the compaction task must be stored unfinished; found ${JSON.stringify(task?.state)}`,
    );
    const live = (await storedDoc(raw, "durably.live", ROOT)) as
      { compaction?: { text: string } } | undefined;
    check(
      live?.compaction !== undefined && CRASH_SUMMARY.startsWith(live.compaction.text),
      () =>
        `compaction: live.compaction must hold a prefix of the summary; found ${JSON.stringify(live?.compaction)}`,
    );
    return;
  }
  const bookings = (await storedDoc(raw, "app.bookings", ROOT)) as { items: string[] } | undefined;
  check(
    JSON.stringify(bookings?.items) === '["first"]',
    () =>
      `tool-commit: killed inside the second api.commit, only the first may be stored; bookings: ${JSON.stringify(bookings)}`,
  );
  const booked = entries
    .filter((e) => e.kind === "app.booked")
    .map((e) => (e.data as { item: string }).item);
  check(
    JSON.stringify(booked) === '["first"]',
    () =>
      `tool-commit: app.booked entries ${JSON.stringify(booked)}; the half-done second commit must leave nothing`,
  );
  const [tool] = await storedTasks(raw, ROOT, "durably.tool");
  check(
    tool?.state.status === "running" &&
      JSON.stringify(tool.memos?.["commit:first"]) === '{"status":"done"}',
    () =>
      `tool-commit: the tool task must be running with the first commit recorded; found ${JSON.stringify(tool)}`,
  );
}

/** Resumes in this process and checks the scenario's outcome. */
export async function resumeAgentCrash(
  open: () => Promise<Storage>,
  scenario: AgentCrash,
  id: string,
  models: HarnessModelFactory,
): Promise<void> {
  const model = recording(models(scenarioScript(scenario, "parent", id)));
  const effects: string[] = [];
  const harness = await Harness.open(await open(), {
    model,
    tools: scenarioTools("parent", {
      running: () => undefined,
      executed: () => undefined,
      effect: (what, attempt) => effects.push(`${what} (attempt ${attempt})`),
    }),
  });
  try {
    const root = await harness.root();
    await harness.whenIdle();
    const entries = await root.entries();
    if (scenario === "compaction") {
      const markers = entries.filter((e) => e.kind === COMPACTION_ENTRY);
      check(
        markers.length === 1 &&
          (markers[0]?.data as { summary?: string }).summary === CRASH_SUMMARY &&
          markers[0]?.head === entries[2]?.id,
        () =>
          `compaction: after resuming, ${markers.length} markers: ${JSON.stringify(markers.map((m) => ({ head: m.head, data: m.data })))}; expected one, whole summary, keeping from entry ${entries[2]?.id}`,
      );
      const settled = await (await root.submit({ type: "input", content: "q3" })).wait();
      const last = model.requests.at(-1);
      const texts = (last?.messages ?? []).map((m) =>
        m.role === "assistant"
          ? m.content.map((p) => (p.type === "text" ? p.text : "")).join("")
          : m.content,
      );
      check(
        settled.status === "done" &&
          JSON.stringify(texts) ===
            JSON.stringify([`${SUMMARY_PREFIX}${CRASH_SUMMARY}`, "q2", "a2", "q3"]),
        () =>
          `compaction: the next run settled ${settled.status} and sent: ${describeMessages(last)}`,
      );
    } else {
      check(
        JSON.stringify(effects) === '["commit second (attempt 2)"]',
        () =>
          `tool-commit: the rerun ran ${JSON.stringify(effects)}; only the second commit may run again (the first and the memo are recorded)`,
      );
      const booked = entries
        .filter((e) => e.kind === "app.booked")
        .map((e) => (e.data as { item: string }).item);
      const result = entries.find((e) => e.kind === "durably.tool-result");
      check(
        JSON.stringify(booked) === '["first","second"]' &&
          (result?.model?.[0] as { content?: unknown } | undefined)?.content ===
            "booked with ref-1",
        () =>
          `tool-commit: booked ${JSON.stringify(booked)}, result ${JSON.stringify(result?.model)}`,
      );
      const submission = (await root.submissions())[0];
      const settled = await submission?.status();
      check(
        settled?.status === "done",
        () => `tool-commit: the run settled ${JSON.stringify(settled)}`,
      );
    }
    const live = (await root.view()).live;
    check(
      live.run === null && live.compaction === undefined && Object.keys(live.tools).length === 0,
      () => `${scenario}: live is not idle after resuming: ${JSON.stringify(live)}`,
    );
  } finally {
    await harness.close();
  }
}
