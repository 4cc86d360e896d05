import { stableJson, type Checks } from "./checks.js";
import { NOTES, notesText } from "./experiment.js";
import type { Output } from "./render/output.js";
import { renderTable } from "./render/table.js";
import type { ConversationState } from "./readback.js";
import type { BackendRun } from "./run-backends.js";

/** The part of a run that must be identical on every backend: ids, seqs, entries, document. */
export function comparable(run: BackendRun): unknown {
  const last = run.run.saves.at(-1)?.state;
  return {
    conversationId: run.run.conversationId,
    saves: run.run.saves,
    final: last,
    snapshot: run.run.snapshot,
  };
}

const entryCell = (state: ConversationState | undefined, i: number): string => {
  const entry = state?.entries[i];
  return entry === undefined
    ? "—"
    : `${entry.kind} ${JSON.stringify(entry.data)} @ seq ${entry.commitSeq}`;
};

function notesRevisions(state: ConversationState | undefined): string {
  const notes = state?.notes;
  if (notes === undefined) return "—";
  const deltas = notes.deltasSinceBase;
  return `base${deltas === 0 ? "" : ` + ${deltas} delta${deltas === 1 ? "" : "s"}`}`;
}

/** Prints the runs side by side, one column per backend, and checks every claim the table makes. */
export function reportExperiment(
  out: Output,
  checks: Checks,
  runs: readonly BackendRun[],
  options: { compare: boolean } = { compare: true },
): void {
  const reference = runs[0];
  if (reference === undefined) throw new Error("no backend ran");
  const sameAsReference = runs.map(
    (r) => stableJson(comparable(r)) === stableJson(comparable(reference)),
  );
  const finals = runs.map((r) => r.run.saves.at(-1)?.state);
  const row = (label: string, cell: (r: BackendRun, i: number) => string): string[] => [
    label,
    ...runs.map(cell),
  ];
  const table = {
    columns: [{ header: "" }, ...runs.map((r) => ({ header: r.backend.title }))],
    rows: [
      row("conversation", (r) => `id ${r.run.conversationId}`),
      ...NOTES.map((note, n) =>
        row(`save ${n + 1} (${JSON.stringify(note)})`, (r) => {
          const save = r.run.saves[n];
          return save === undefined ? "—" : `entry ${save.entryId}, seq ${save.seq}`;
        }),
      ),
      ...NOTES.map((_note, n) => row(`entry ${n + 1}`, (_r, i) => entryCell(finals[i], n))),
      row("notes document", (_r, i) => {
        const notes = finals[i]?.notes;
        return notes === undefined ? "—" : `id ${notes.documentId}, created seq ${notes.createdAt}`;
      }),
      row("notes stored as", (_r, i) => notesRevisions(finals[i])),
      row("notes value", (_r, i) => JSON.stringify(finals[i]?.notes?.value)),
      row("session.snapshot", (r) => JSON.stringify(r.run.snapshot)),
      row("after reopen", (r) =>
        r.reopened === undefined
          ? "n/a (not persistent)"
          : stableJson(r.reopened) === stableJson(r.run.saves.at(-1)?.state)
            ? "same"
            : "DIFFERENT",
      ),
      ...(options.compare
        ? [
            row(`vs ${reference.backend.title}`, (_r, i) =>
              sameAsReference[i] ? "identical" : "DIFFERENT",
            ),
          ]
        : []),
    ],
  };
  out.lines(renderTable(table, out.style));
  out.line();

  const expectedAfter = (n: number) => ({
    entries: NOTES.slice(0, n + 1).map((note) => ({ kind: "note", data: note })),
    text: notesText(NOTES[n] ?? ""),
  });
  for (const r of runs) {
    const seen = r.run.saves.map((save) => ({
      entries: save.state.entries.map((e) => ({ kind: e.kind, data: e.data })),
      text: (save.state.notes?.value as { text?: unknown } | undefined)?.text,
    }));
    const expected = NOTES.map((_n, i) => expectedAfter(i));
    checks.same(
      `${r.backend.title}: after each save, storage holds exactly the notes so far and the new text`,
      seen,
      expected,
    );
  }
  if (options.compare) {
    checks.claim(
      `all ${runs.length} backends return identical results (ids, seqs, entries, document)`,
      sameAsReference.every(Boolean),
      runs
        .map(
          (r, i) =>
            `${r.backend.title}: ${sameAsReference[i] ? "same" : stableJson(comparable(r))}`,
        )
        .join("\n"),
    );
  }
  checks.claim(
    "each save's entry and notes change share one seq: the notes read at that seq show the new text, one seq earlier the old",
    runs.every((r) =>
      r.run.saves.every((save, n) => {
        const before = n === 0 ? undefined : { text: notesText(NOTES[n - 1] ?? "") };
        return (
          stableJson(save.notesAt) === stableJson({ text: notesText(save.note) }) &&
          stableJson(save.notesBefore) === stableJson(before)
        );
      }),
    ),
  );
  checks.claim(
    "session.snapshot equals the stored document on every backend",
    runs.every((r, i) => stableJson(r.run.snapshot) === stableJson(finals[i]?.notes?.value)),
  );
  const persistent = runs.filter((r) => r.reopened !== undefined);
  if (persistent.length === 0) return;
  checks.claim(
    `${persistent.map((r) => r.backend.title).join(", ")} read back the same after close and reopen`,
    persistent.every((r) => stableJson(r.reopened) === stableJson(r.run.saves.at(-1)?.state)),
  );
}
