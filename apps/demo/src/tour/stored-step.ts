import { classicLevel } from "../backends.js";
import type { Checks } from "../checks.js";
import { dumpJsonl } from "../dump/jsonl.js";
import { dumpPostgres } from "../dump/postgres.js";
import { printSections } from "../dump/section.js";
import { dumpSqlite, type SqliteDump } from "../dump/sqlite.js";
import { dumpStore } from "../dump/store.js";
import { levelStore, StoreStorage } from "@durably/storage-store";
import { subheading } from "../render/heading.js";
import { pgSession, requirePgUrl } from "../postgres-config.js";
import type { Output } from "../render/output.js";
import type { BackendRun } from "../run-backends.js";
import type { TourStep } from "./context.js";

function finalEntries(run: BackendRun) {
  return run.run.saves.at(-1)?.state.entries ?? [];
}

/** The two checks both SQL backends make of their rows: entries with their commit_seq, one base then one delta. */
function checkRows(checks: Checks, name: string, run: BackendRun, dump: SqliteDump): void {
  const entries = finalEntries(run);
  checks.same(
    `${name}: the entries rows are the entries the port returned, each with its save's commit_seq`,
    dump.entries.map((r) => ({ id: r.id, seq: r.commit_seq, data: r.data })),
    entries.map((e) => ({ id: e.id, seq: e.commitSeq, data: e.data })),
  );
  const documentId = run.run.saves.at(-1)?.state.notes?.documentId;
  checks.same(
    `${name}: the notes document has one base (first save) and one delta (second save)`,
    dump.revisions
      .filter((r) => r.document_id === documentId)
      .map((r) => ({ seq: r.seq, kind: r.kind })),
    run.run.saves.map((s, i) => ({ seq: s.seq, kind: i === 0 ? "base" : "delta" })),
  );
}

async function showSqlite(out: Output, checks: Checks, run: BackendRun): Promise<void> {
  const file = run.backend.location(run.dir);
  subheading(out, `SQLite: ${file}`);
  const dump = await dumpSqlite(file);
  printSections(out, dump.sections);
  out.line();
  checkRows(checks, "SQLite", run, dump);
}

async function showPostgres(out: Output, checks: Checks, run: BackendRun): Promise<void> {
  const session = pgSession(run.dir);
  subheading(out, `PostgreSQL: ${run.backend.location(run.dir)}`);
  out.line(
    `  Every table leads with session_key; below, the rows of this session ($1 is its key).`,
  );
  const dump = await dumpPostgres(requirePgUrl(), session);
  printSections(out, dump.sections);
  out.line();
  checkRows(checks, "PostgreSQL", run, dump);
}

async function showJsonl(out: Output, checks: Checks, run: BackendRun): Promise<void> {
  subheading(out, `JSONL: ${run.dir}`);
  const sections = await dumpJsonl(run.dir);
  printSections(out, sections);
  out.line();
  const main = sections.find((s) => s.title === "main.jsonl");
  const markerSeqs =
    main && "lines" in main
      ? main.lines
          .map((line) => JSON.parse(line) as { type?: unknown; seq?: unknown })
          .filter((l) => l.type === "commit")
          .map((l) => l.seq)
      : [];
  const saveSeqs = run.run.saves.map((s) => s.seq);
  checks.claim(
    `JSONL: main.jsonl holds one commit marker per commit, including each save's (seqs ${saveSeqs.join(", ")})`,
    saveSeqs.every((seq) => markerSeqs.filter((s) => s === seq).length === 1) &&
      new Set(markerSeqs).size === markerSeqs.length,
    `marker seqs: ${JSON.stringify(markerSeqs)}`,
  );
  const documentId = run.run.saves.at(-1)?.state.notes?.documentId;
  const sidecar = sections.find((s) => s.title === `doc-${documentId}.jsonl`);
  checks.claim(
    `JSONL: the notes document's revisions are in its sidecar doc-${documentId}.jsonl, one line per save`,
    sidecar !== undefined && "lines" in sidecar && sidecar.lines.length === run.run.saves.length,
  );
}

async function showStore(out: Output, checks: Checks, run: BackendRun): Promise<void> {
  subheading(out, `Store (LevelDB): ${run.dir}`);
  // Opened through StoreStorage, which verifies the commit chain and then lets
  // the store drop the log copies it keeps until an open is verified.
  const storage = await StoreStorage.open(levelStore(classicLevel(run.dir)));
  try {
    const dump = await dumpStore(storage.store);
    printSections(out, dump.sections);
    out.line();
    const entries = finalEntries(run);
    checks.claim(
      `Store: the e/ range holds one key per entry (${entries.length}), r/ one per notes revision (${run.run.saves.length})`,
      dump.counts.get("e/") === entries.length && dump.counts.get("r/") === run.run.saves.length,
      `e/: ${dump.counts.get("e/")}, r/: ${dump.counts.get("r/")}`,
    );
  } finally {
    await storage.close();
  }
}

/** Prints what one backend's experiment left on disk (or in its database), checking it against what the port returned. */
export async function showStored(out: Output, checks: Checks, run: BackendRun): Promise<void> {
  switch (run.backend.name) {
    case "memory":
      subheading(out, "memory");
      out.line("  Kept in this process's memory only: nothing is left once the session closes.");
      return;
    case "sqlite":
      return showSqlite(out, checks, run);
    case "jsonl":
      return showJsonl(out, checks, run);
    case "store":
      return showStore(out, checks, run);
    case "postgres":
      return showPostgres(out, checks, run);
  }
}

export const storedStep: TourStep = {
  title: "2. What each backend stored",
  async run(context) {
    const { out, checks } = context;
    const runs = context.experiment;
    if (runs === undefined) throw new Error("the stored step needs the experiment step first");
    for (const run of runs) await showStored(out, checks, run);
  },
};
