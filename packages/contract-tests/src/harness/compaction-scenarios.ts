import {
  COMPACTION_ENTRY,
  Harness,
  SUMMARY_PREFIX,
  type EntryId,
  type EntryRecord,
  type ModelRequest,
} from "@durably/core";
import type { Reopen } from "../storage/api.js";
import { check } from "./invariants.js";
import { describeMessages, recording } from "./recording.js";
import type { HarnessScenario } from "./scenarios.js";
import { scriptId } from "./scripts.js";

const SUMMARY = "the user asked q1 and q2; both were answered";

const texts = (request: ModelRequest | undefined): string[] =>
  (request?.messages ?? []).map((m) =>
    m.role === "assistant"
      ? m.content.map((p) => (p.type === "text" ? p.text : "")).join("")
      : typeof m.content === "string"
        ? m.content
        : "[parts]",
  );

const markers = (entries: readonly EntryRecord[]) =>
  entries.filter((e) => e.kind === COMPACTION_ENTRY);

/** Checks that `request` starts with the summary, then holds `rest` (the kept turns and the new input). */
function checkSummarized(request: ModelRequest | undefined, rest: string[], what: string): void {
  check(
    JSON.stringify(texts(request)) === JSON.stringify([`${SUMMARY_PREFIX}${SUMMARY}`, ...rest]),
    () => `${what}: ${describeMessages(request)}`,
  );
}

/** Checks that the conversation's first compaction marker says it was made for `reason`. */
async function checkMarkerReason(
  conversation: { entries(): Promise<readonly EntryRecord[]> },
  reason: string,
): Promise<void> {
  const [marker] = markers(await conversation.entries());
  check(
    (marker?.data as { reason?: string } | undefined)?.reason === reason,
    () => `the marker: ${JSON.stringify(marker)}`,
  );
}

/** Compaction: a summary marker replaces the start of what the model sees; the transcript stays. */
export const compactionScenarios: readonly HarnessScenario[] = [
  {
    name: "compact() stores one durably.compaction marker; the next request shows the summary, then the kept turn, then the new input",
    async run(storage, _reopen, models) {
      const model = recording(
        models({
          id: scriptId("compact"),
          turns: [{ text: "a1" }, { text: "a2" }, { text: "a3" }],
          options: { summary: SUMMARY },
        }),
      );
      const harness = await Harness.open(storage, { model });
      try {
        const root = await harness.root();
        for (const q of ["q1", "q2"])
          await (await root.submit({ type: "input", content: q })).wait();
        const result = await root.compact({ keepLastTurns: 1 });
        const entries = await root.entries();
        const [marker] = markers(entries);
        check(
          result.status === "compacted" && marker !== undefined && result.entryId === marker.id,
          () =>
            `compact() returned ${JSON.stringify(result)}; markers stored: ${markers(entries).length}`,
        );
        check(
          marker.head === entries[2]?.id &&
            (marker.data as { summary?: string }).summary === SUMMARY &&
            entries.length === 5,
          () =>
            `the marker should keep from q2's entry ${entries[2]?.id} and hold the summary; it is ${JSON.stringify(marker)}`,
        );
        await (await root.submit({ type: "input", content: "q3" })).wait();
        checkSummarized(
          model.requests.at(-1),
          ["q2", "a2", "q3"],
          "the request after the compaction held",
        );
        check(
          (await root.entries()).length === 7,
          () => "the full transcript must stay: 5 entries, then q3 and its answer",
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "an overflow compacts the conversation once, then calls the model again",
    async run(storage, _reopen, models) {
      const model = recording(
        models({
          id: scriptId("overflow"),
          turns: [
            { text: "a1" },
            { text: "a2" },
            { text: "never", failures: [{ message: "the prompt is too long", kind: "overflow" }] },
          ],
          options: { summary: SUMMARY },
        }),
      );
      const harness = await Harness.open(storage, {
        model,
        settings: { compaction: { keepLastTurns: 1 } },
      });
      try {
        const root = await harness.root();
        for (const q of ["q1", "q2"])
          await (await root.submit({ type: "input", content: q })).wait();
        const settled = await (await root.submit({ type: "input", content: "q3" })).wait();
        const purposes = model.requests.map((r) => r.purpose ?? "answer");
        check(
          settled.status === "done" &&
            JSON.stringify(purposes) === '["answer","answer","answer","compaction","answer"]',
          () => `settled ${JSON.stringify(settled)} after calls ${JSON.stringify(purposes)}`,
        );
        checkSummarized(model.requests[4], ["q3"], "the call after the compaction held");
        await checkMarkerReason(root, "overflow");
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "a conversation is compacted automatically once the last request passed contextWindow × threshold",
    async run(storage, _reopen, models) {
      const model = recording(
        models({
          id: scriptId("threshold"),
          turns: [
            { text: "a1", usage: { inputTokens: 10, outputTokens: 1 } },
            { text: "a2", usage: { inputTokens: 60, outputTokens: 1 } },
          ],
          options: { summary: SUMMARY },
        }),
      );
      const harness = await Harness.open(storage, {
        models: { default: { model, contextWindow: 100, compactAt: 0.5 } },
        settings: { compaction: { keepLastTurns: 1 } },
      });
      try {
        const root = await harness.root();
        for (const q of ["q1", "q2", "q3"])
          await (await root.submit({ type: "input", content: q })).wait();
        const purposes = model.requests.map((r) => r.purpose ?? "answer");
        check(
          JSON.stringify(purposes) === '["answer","answer","compaction","answer"]',
          () =>
            `calls: ${JSON.stringify(purposes)}; q3 came after a request of 60 tokens, over 100 × 0.5`,
        );
        checkSummarized(model.requests[3], ["q3"], "q3's request after the compaction");
        await checkMarkerReason(root, "threshold");
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "a fork before a compaction sees the whole context; a fork after it sees the summary",
    async run(storage, _reopen, models) {
      const model = recording(
        models({
          id: scriptId("compact-fork"),
          turns: [{ text: "a1" }, { text: "a2" }, { text: "a3" }, { text: "a4" }],
          options: { summary: SUMMARY },
        }),
      );
      const harness = await Harness.open(storage, { model });
      try {
        const root = await harness.root();
        for (const q of ["q1", "q2"])
          await (await root.submit({ type: "input", content: q })).wait();
        await root.compact({ keepLastTurns: 1 });
        const entries = await root.entries();
        const early = await root.fork({ at: entries[3]?.id as EntryId });
        await (await early.submit({ type: "input", content: "early" })).wait();
        check(
          JSON.stringify(texts(model.requests.at(-1))) === '["q1","a1","q2","a2","early"]',
          () =>
            `a fork at entry ${entries[3]?.id} (before the marker) sent: ${describeMessages(model.requests.at(-1))}`,
        );
        const late = await root.fork();
        await (await late.submit({ type: "input", content: "late" })).wait();
        checkSummarized(
          model.requests.at(-1),
          ["q2", "a2", "late"],
          "a fork after the marker sent",
        );
      } finally {
        await harness.close();
      }
    },
  },
  {
    name: "a compaction cut short by a close finishes after the reopen, with exactly one marker",
    persistent: true,
    async run(storage, reopen, models) {
      const script = {
        id: scriptId("compact-reopen"),
        turns: [{ text: "a1" }, { text: "a2" }, { text: "a3" }],
        options: { summary: `${SUMMARY} ${"-".repeat(300)}`, chunkSize: 1, chunkDelayMs: 3 },
      };
      const first = await Harness.open(storage, { model: models(script) });
      const root = await first.root();
      for (const q of ["q1", "q2"]) await (await root.submit({ type: "input", content: q })).wait();
      let shown = 0;
      root.watch((view) => {
        shown = Math.max(shown, view.live.compaction?.text.length ?? 0);
      });
      const compacting = root.compact({ keepLastTurns: 1 }).then(
        (result) => `resolved ${JSON.stringify(result)}`,
        (error: unknown) => (error as Error).name,
      );
      while (shown < 20) await new Promise((r) => setTimeout(r, 2));
      await first.close(); // mid-summary: nothing of it may be stored as a marker
      const waited = await compacting;
      check(waited === "SessionClosed", () => `compact() on a harness closed meanwhile: ${waited}`);
      const fast = { ...script, options: { summary: script.options.summary } };
      const harness = await Harness.open(await (reopen as Reopen)(), { model: models(fast) });
      try {
        const before = markers(await (await harness.root()).entries());
        check(
          before.length === 0,
          () => `${before.length} markers were stored before the compaction finished`,
        );
        await harness.whenIdle();
        const after = markers(await (await harness.root()).entries());
        check(
          after.length === 1 &&
            (after[0]?.data as { summary?: string }).summary === script.options.summary,
          () =>
            `after the reopen: ${after.length} markers: ${JSON.stringify(after.map((m) => m.data))}`,
        );
        const live = (await (await harness.root()).view()).live;
        check(
          live.compaction === undefined,
          () => `live.compaction left behind: ${JSON.stringify(live)}`,
        );
      } finally {
        await harness.close();
      }
    },
  },
];
