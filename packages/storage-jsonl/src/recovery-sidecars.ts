import type { StorageCorrupted, TaskRecord } from "@durably/core";
import { DocumentFold } from "./document-fold.js";
import { decodeRecord, LineError, MAIN_FILE, type SidecarRecord } from "./line-format.js";
import type { FileLines } from "./line-reader.js";
import { corrupted, lineProblem, type Ref, type Sidecar } from "./recovery-markers.js";

/** A complete record beyond the last marker: written by a commit call whose markers are not in main.jsonl. */
export interface UnconfirmedRecord {
  file: string;
  line: number;
  seq: number;
  /** The first seq of the call that wrote it; undefined for a format-1 record (which does not say). */
  call: number | undefined;
}

/** What one referenced sidecar holds. */
export interface SidecarScan {
  /** Bytes and lines of the confirmed records; what follows is the unconfirmed tail. */
  confirmedEnd: number;
  confirmedLines: number;
  size: number;
  unconfirmed: UnconfirmedRecord[];
  /** The highest `call` among the confirmed records (0 when none says). */
  highestCall: number;
  /**
   * Set when the confirmed records are all missing and the file starts
   * with a base of a later seq instead: only a rewrite puts a base first,
   * and it runs only after that base's marker is in main.jsonl, so
   * main.jsonl lost confirmed lines.
   */
  rewrittenAt?: { line: number; seq: number };
  /**
   * Set when a file reclamation removes (a task's, a current-only
   * document's) is missing: the caller reports it once main.jsonl is known
   * whole, since a lost marker would explain it as well.
   */
  missingFile?: StorageCorrupted;
  /** Documents: the confirmed revisions folded into the head. */
  fold?: DocumentFold;
  /** Tasks: the value of the newest confirmed replacement, and its line. */
  task?: { value: TaskRecord; line: number };
}

/** Index of the ref `(seq, ordinal)` names, or -1. */
function findRef(refs: readonly Ref[], seq: number, ordinal: number): number {
  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i] as Ref;
    if (ref.seq === seq && ref.ordinal === ordinal) return i;
  }
  return -1;
}

/** The seq a damaged line claims, when it still shows one (to tell a torn tail from a damaged record). */
function lineSeq(text: string): number {
  const match = /"seq":([0-9]+)/.exec(text);
  return match ? Number(match[1]) : 0;
}

const isBase = (record: SidecarRecord) =>
  record.payload.type === "document" && record.payload.content.kind === "base";

/**
 * Streams one sidecar and matches its records, in order, to the refs that
 * confirm them, folding documents as it goes. The file must hold a
 * contiguous run of the refs ending at the last one; only a current-only
 * document (from a base on) or a task may have lost the refs before the run
 * to reclamation. What follows the run is the unconfirmed tail: its records
 * are collected (with the call that wrote them) for the caller to judge.
 * Damage to confirmed records fails with `StorageCorrupted` naming the line.
 */
export async function scanSidecar(
  lines: FileLines,
  sidecar: Sidecar,
  lastSeq: number,
): Promise<SidecarScan> {
  const { file, refs, isTask, ownerId } = sidecar;
  const fold = isTask ? undefined : new DocumentFold(file, ownerId, sidecar.currentOnly);
  let task: { value: TaskRecord; line: number } | undefined;
  let next = -1; // index of the ref the next record must match; -1 before the first
  let count = 0;
  let confirmedEnd = 0;
  let highestCall = 0;
  let tailFrom = 0; // line where the unconfirmed tail starts; 0 before it
  let firstUnconfirmed: SidecarRecord | undefined;
  const unconfirmed: UnconfirmedRecord[] = [];
  const missing = (ref: Ref, line: number) =>
    corrupted(
      file,
      line,
      `record (seq ${ref.seq}, ordinal ${ref.ordinal}) confirmed by ${ref.by ?? MAIN_FILE} line ${ref.markerLine} is missing`,
    );
  for (let window = await lines.next(); window; window = await lines.next())
    while (window.next()) {
      const line = window.line;
      let record: SidecarRecord;
      try {
        record = decodeRecord(window.text(), window);
      } catch (error) {
        // A complete line inside the unconfirmed tail may be anything a crash left; it is cut.
        const inTail =
          tailFrom > 0 ||
          next >= refs.length ||
          (next >= 0 && error instanceof LineError && lineSeq(window.text()) > lastSeq);
        if (!inTail) throw lineProblem(file, line, error);
        if (tailFrom === 0) tailFrom = line;
        continue;
      }
      if (tailFrom === 0) {
        // Records normally follow their refs one for one: look further only when one does not.
        const expected = refs[Math.max(next, 0)];
        const at =
          next >= refs.length
            ? -1
            : expected !== undefined &&
                expected.seq === record.seq &&
                expected.ordinal === record.ordinal
              ? Math.max(next, 0)
              : findRef(refs, record.seq, record.ordinal);
        if (at >= 0) {
          if (next === -1) {
            const reclaimable = isTask || (sidecar.currentOnly && isBase(record));
            if (at > 0 && !reclaimable) throw missing(refs[0] as Ref, line);
            next = at;
          }
          if (at !== next) throw missing(refs[next] as Ref, line);
          const payload = record.payload;
          const payloadId = payload.type === "task" ? payload.value.id : payload.id;
          if ((payload.type === "task") !== isTask || payloadId !== ownerId)
            throw corrupted(
              file,
              line,
              `a record of ${payload.type} ${payloadId} does not belong in ${file}`,
            );
          const placement = { offset: window.offset, length: window.length, line };
          if (payload.type === "task") task = { value: payload.value, line };
          else fold?.add(record.seq, payload.content, placement);
          confirmedEnd = placement.offset + placement.length;
          if (record.call !== undefined && record.call > highestCall) highestCall = record.call;
          count++;
          next++;
          continue;
        }
        if (record.seq <= lastSeq)
          throw corrupted(
            file,
            line,
            `record (seq ${record.seq}, ordinal ${record.ordinal}) is not confirmed by any marker in ${MAIN_FILE}`,
          );
        tailFrom = line; // the unconfirmed tail starts here
        firstUnconfirmed ??= record;
      } else if (record.seq <= lastSeq)
        throw corrupted(
          file,
          line,
          `record (seq ${record.seq}, ordinal ${record.ordinal}) follows lines of commits ${MAIN_FILE} does not hold (from line ${tailFrom})`,
        );
      unconfirmed.push({ file, line, seq: record.seq, call: record.call });
    }
  const scan: SidecarScan = {
    confirmedEnd,
    confirmedLines: count,
    size: lines.size,
    unconfirmed,
    highestCall,
    ...(fold === undefined ? {} : { fold }),
    ...(task === undefined ? {} : { task }),
  };
  if (next < refs.length) {
    const first = unconfirmed[0];
    if (
      next === -1 &&
      first !== undefined &&
      first.line === 1 &&
      sidecar.currentOnly &&
      firstUnconfirmed !== undefined &&
      isBase(firstUnconfirmed)
    )
      return { ...scan, rewrittenAt: { line: 1, seq: first.seq } };
    if (!lines.exists) {
      const ref = refs[0] as Ref;
      const gone = `the file is missing, but ${ref.by ?? MAIN_FILE} line ${ref.markerLine} confirms its record (seq ${ref.seq}, ordinal ${ref.ordinal})`;
      // Reclamation removes such a file after a marker: main.jsonl may have lost that marker instead.
      if (isTask || sidecar.currentOnly)
        return {
          ...scan,
          missingFile: corrupted(
            file,
            1,
            `${gone}; it is removed only after a marker makes its ${isTask ? "task terminal" : "document retired"}, so either the file was deleted or ${MAIN_FILE} lost that marker`,
          ),
        };
      throw corrupted(file, 1, gone);
    }
    throw missing(refs[Math.max(next, 0)] as Ref, count + 1);
  }
  return scan;
}

/** What a sidecar no marker names holds: records of an unconfirmed call, or something else. */
export interface UnnamedScan {
  unconfirmed: UnconfirmedRecord[];
  /** Why the file is not just the records of an unconfirmed call (the first problem found). */
  problem?: string;
}

/** Streams a sidecar that no marker names, collecting its records; nothing in it is confirmed. */
export async function scanUnnamed(
  lines: FileLines,
  file: string,
  owner: { isTask: boolean; id: number },
  lastSeq: number,
): Promise<UnnamedScan> {
  const unconfirmed: UnconfirmedRecord[] = [];
  let problem: string | undefined;
  for (let window = await lines.next(); window; window = await lines.next())
    while (window.next()) {
      const line = window.line;
      let record: SidecarRecord;
      try {
        record = decodeRecord(window.text(), window);
      } catch (error) {
        if (!(error instanceof LineError)) throw error;
        problem ??= `line ${line}: ${error.message}`;
        continue;
      }
      const payload = record.payload;
      const payloadId = payload.type === "task" ? payload.value.id : payload.id;
      if ((payload.type === "task") !== owner.isTask || payloadId !== owner.id)
        problem ??= `line ${line}: a record of ${payload.type} ${payloadId}`;
      if (record.seq <= lastSeq)
        problem ??= `line ${line}: a record of seq ${record.seq}, which ${MAIN_FILE} holds without listing it`;
      else unconfirmed.push({ file, line, seq: record.seq, call: record.call });
    }
  return problem === undefined ? { unconfirmed } : { unconfirmed, problem };
}
