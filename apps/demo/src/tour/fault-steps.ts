import { stableJson } from "../checks.js";
import { BACKENDS, tourBackends } from "../backends.js";
import { printSections } from "../dump/section.js";
import { dumpSqlite } from "../dump/sqlite.js";
import { killWriterMidTransaction } from "../faults/sqlite-kill.js";
import {
  DemoSaveFailed,
  throwingSaveOn,
  type ThrowingSaveOutcome,
} from "../faults/throwing-save.js";
import { tornMarker } from "../faults/torn-marker.js";
import { subheading } from "../render/heading.js";
import { withProgress } from "../render/progress.js";
import { renderTable } from "../render/table.js";
import { lastSeq, type ConversationState } from "../readback.js";
import { backendDir } from "../run-backends.js";
import type { TourStep } from "./context.js";

const text = (state: ConversationState | undefined): string =>
  JSON.stringify((state?.notes?.value as { text?: unknown } | undefined)?.text);

const summary = (state: ConversationState | undefined): string =>
  state === undefined
    ? "n/a (not persistent)"
    : `${state.entries.length} entries, ${text(state)}, seq ${lastSeq(state)}`;

export const throwingSaveStep: TourStep = {
  title: "3. Fault one: a save whose code throws",
  async run({ out, checks, root }) {
    out.line("After the two saves, a third save appends an entry, edits the notes, then throws.");
    out.line("The Session discards it whole: nothing stored, nothing published, no seq used.");
    out.line();
    const outcomes: ThrowingSaveOutcome[] = [];
    for (const backend of tourBackends()) {
      outcomes.push(
        await withProgress(out, `throwing save on ${backend.title}`, () =>
          throwingSaveOn(backend, backendDir(root, "fault-throw", backend)),
        ),
      );
    }
    out.lines(
      renderTable(
        {
          columns: [
            { header: "backend" },
            { header: "before the faulty save" },
            { header: "after it threw" },
            { header: "next save", align: "right" },
            { header: "after reopen" },
          ],
          rows: outcomes.map((o) => [
            o.backend.title,
            summary(o.before),
            summary(o.afterThrow),
            `seq ${o.nextSeq}`,
            summary(o.afterReopen),
          ]),
        },
        out.style,
      ),
    );
    out.line();
    for (const o of outcomes) {
      const name = o.backend.title;
      checks.claim(
        `${name}: the save's promise rejected with the code's own error`,
        o.rejection instanceof DemoSaveFailed,
        `got ${String(o.rejection)}`,
      );
      checks.claim(
        `${name}: no trace of it: same entries, same notes, same snapshot, entry ${o.attemptedEntryId} absent`,
        o.attemptedEntryId !== undefined &&
          !o.attemptedEntryStored &&
          stableJson(o.afterThrow) === stableJson(o.before) &&
          stableJson(o.snapshotAfterThrow) === stableJson(o.before.notes?.value),
        `before ${stableJson(o.before)}\nafter  ${stableJson(o.afterThrow)}\nsnapshot ${stableJson(o.snapshotAfterThrow)}`,
      );
      checks.claim(
        `${name}: no seq was used and the session goes on: the next save is stored at seq ${o.lastSeqBefore + 1}`,
        o.nextSeq === o.lastSeqBefore + 1 &&
          o.afterNext.entries.length === o.before.entries.length + 1,
        `got seq ${o.nextSeq}`,
      );
      if (o.afterReopen !== undefined) {
        checks.claim(
          `${name}: after reopen, the earlier saves and the next one, and still no trace of the faulty one`,
          stableJson(o.afterReopen) === stableJson(o.afterNext) &&
            !o.attemptedEntryStoredAfterReopen,
          `expected ${stableJson(o.afterNext)}\n     got ${stableJson(o.afterReopen)}`,
        );
      }
    }
  },
};

export const tornMarkerStep: TourStep = {
  title: "4. Fault two: a commit cut short",
  async run({ out, checks, root }) {
    subheading(out, "JSONL: the last commit marker of main.jsonl cut in half");
    const jsonl = await withProgress(out, "cutting main.jsonl", () =>
      tornMarker(backendDir(root, "fault-torn", BACKENDS.jsonl)),
    );
    out.line("  The last line before the cut (save 2's marker):");
    out.line(`    ${jsonl.markerLine}`);
    out.line("  What a crash half way through that append leaves:");
    out.line(`    ${jsonl.tornLine}${out.style.red("⟵ cut")}`);
    out.line();
    out.lines(
      renderTable(
        {
          columns: [{ header: "" }, { header: "entries" }, { header: "notes" }],
          rows: [
            ["after save 1", ...cells(jsonl.afterSave[0])],
            ["after save 2", ...cells(jsonl.afterSave[1])],
            ["reopened after the cut", ...cells(jsonl.reopened)],
          ],
        },
        out.style,
      ),
    );
    printSections(out, [
      { title: "main.jsonl after recovery", lines: jsonl.linesRecovered },
      { title: `${jsonl.sidecar} after recovery`, lines: jsonl.sidecarRecovered },
    ]);
    out.line();
    checks.same(
      "JSONL: reopening shows the first save intact and the second gone",
      jsonl.reopened,
      jsonl.afterSave[0],
    );
    checks.claim(
      `JSONL: save 2's entry ${jsonl.secondEntryId} is absent after reopen`,
      !jsonl.secondEntryStored,
    );
    checks.same(
      `JSONL: recovery cut the torn marker from main.jsonl and save 2's unconfirmed record from ${jsonl.sidecar}`,
      { main: jsonl.linesRecovered, sidecar: jsonl.sidecarRecovered },
      { main: jsonl.linesBefore.slice(0, -1), sidecar: jsonl.sidecarBefore.slice(0, -1) },
    );

    subheading(out, "SQLite: a writer SIGKILLed inside its SQL transaction");
    const sqlite = await withProgress(out, "running and killing a SQLite writer", () =>
      killWriterMidTransaction(backendDir(root, "fault-kill", BACKENDS.sqlite)),
    );
    out.line(
      `  A child process made two saves, then paused inside the third save's transaction after its`,
    );
    out.line(
      `  statements had changed ${sqlite.changesInFlight ?? "?"} rows, and was killed there (signal ${sqlite.signal ?? "none"}).`,
    );
    out.line();
    out.lines(
      renderTable(
        {
          columns: [{ header: "" }, { header: "entries" }, { header: "notes" }],
          rows: [
            ["acknowledged before the kill", ...cells(sqlite.before)],
            ["reopened after the kill", ...cells(sqlite.reopened)],
          ],
        },
        out.style,
      ),
    );
    printSections(out, (await dumpSqlite(sqlite.file)).sections);
    out.line();
    checks.claim(
      "SQLite: the writer was SIGKILLed inside its transaction, after its writes",
      sqlite.signal === "SIGKILL" &&
        stableJson(sqlite.reports) === stableJson(["ready", "saving", "paused"]) &&
        (sqlite.changesInFlight ?? 0) > 0,
      `signal ${sqlite.signal}, exit code ${sqlite.exitCode}, reports ${sqlite.reports.join(", ")}\n${sqlite.stderr}`,
    );
    checks.same(
      "SQLite: reopening shows the two earlier saves intact",
      sqlite.reopened,
      sqlite.before,
    );
    checks.claim(
      `SQLite: the killed save's entry ${sqlite.attemptedEntryId} is absent`,
      sqlite.attemptedEntryId !== undefined && !sqlite.attemptedEntryStored,
    );
  },
};

function cells(state: ConversationState | undefined): [string, string] {
  if (state === undefined) return ["—", "—"];
  return [state.entries.map((e) => `${e.id} ${JSON.stringify(e.data)}`).join(", "), text(state)];
}
