import {
  baselineCases,
  rawFs,
  rawLevel,
  rawMemory,
  rawSqlite,
  sampleJsonlLines,
} from "./baselines.js";
import { BACKENDS, backend } from "./backends.js";
import { sessionCase, sessionCases } from "./commits.js";
import { directCase } from "./direct.js";
import type { JsonlLines } from "./baselines.js";
import type { CommitCase } from "./harness.js";
import type { Scratch } from "./paths.js";
import { langgraphCase } from "./peer-langgraph.js";

/**
 * The commit case lists, by name, so a child process can build the same list
 * as its parent and open one case of it (`isolated.ts`).
 */
export type CaseListName = "kernel" | "full";

export interface CaseListRef {
  name: CaseListName;
  writers: number;
}

/**
 * The sample JSONL lines the raw appends write, made on first use: only the
 * process that opens a raw JSONL case writes the sample storage.
 */
function sampleOnce(scratch: Scratch): () => Promise<JsonlLines> {
  let sample: Promise<JsonlLines> | undefined;
  return () => (sample ??= sampleJsonlLines(scratch));
}

/** Issue 21's cases: the Session against raw storage and LangGraph's `put`. */
function kernelCases(writers: number, scratch: Scratch): CommitCase[] {
  const lines = sampleOnce(scratch);
  const sqlite = backend("sqlite");
  const full = backend("sqlite-full");
  const jsonl = backend("jsonl");
  const store = backend("store-level");
  return [
    sessionCase(backend("memory"), 1, scratch),
    rawMemory(1),
    ...[1, writers].flatMap((w) => [
      sessionCase(sqlite, w, scratch),
      directCase(sqlite, w, scratch),
      rawSqlite(w, scratch),
      sessionCase(full, w, scratch),
      directCase(full, w, scratch),
      rawSqlite(w, scratch, true),
      langgraphCase(w, scratch),
    ]),
    sessionCase(jsonl, writers, scratch),
    directCase(jsonl, writers, scratch),
    rawFs(writers, false, lines, scratch),
    sessionCase(store, writers, scratch),
    directCase(store, writers, scratch),
    rawLevel(writers, scratch),
  ];
}

/** `pnpm bench`'s commit cases: the Session on every backend, storage direct, raw baselines, LangGraph. */
function fullCases(writers: number, scratch: Scratch): CommitCase[] {
  const lines = sampleOnce(scratch);
  return [
    ...sessionCases(writers, scratch),
    ...BACKENDS.filter((b) => !b.id.startsWith("memory")).flatMap((b) => [
      directCase(b, 1, scratch),
      directCase(b, writers, scratch),
    ]),
    ...baselineCases(writers, lines, scratch),
    langgraphCase(1, scratch),
    langgraphCase(writers, scratch),
  ];
}

/** The list's cases, unopened: building one does no I/O beyond `scratch`'s directory. */
export function buildCases(list: CaseListRef, scratch: Scratch): CommitCase[] {
  return list.name === "kernel"
    ? kernelCases(list.writers, scratch)
    : fullCases(list.writers, scratch);
}
