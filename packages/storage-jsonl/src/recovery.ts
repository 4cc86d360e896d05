import { StorageCorrupted } from "@durably/core";
import type { FileSystem } from "./file-system.js";
import type { JsonlIndex } from "./jsonl-index.js";
import { MAIN_FILE, parseSidecarName } from "./line-format.js";
import { FileLines } from "./line-reader.js";
import { checkLostMarkers } from "./lost-markers.js";
import { readMarkers, sidecarKey, type MarkerLog, type Sidecar } from "./recovery-markers.js";
import { MarkerReplay, type Found } from "./recovery-replay.js";
import {
  scanSidecar,
  scanUnnamed,
  type SidecarScan,
  type UnconfirmedRecord,
} from "./recovery-sidecars.js";
import { SetAside } from "./set-aside.js";

/**
 * What open found and repaired. Nothing recovery cut was confirmed, and
 * nothing it cut is gone: cut bytes and set-aside files are kept under
 * `recovered/` in the storage directory (paths relative to it).
 */
export interface RecoveryReport {
  /** Commits found in main.jsonl. */
  commits: number;
  /** Bytes of an unterminated (torn) final line cut from main.jsonl. */
  tornMarkerBytes: number;
  /** Files whose unconfirmed tail was cut (main.jsonl's torn final line included), with the copy of what was cut. */
  truncated: { file: string; bytes: number; savedAs: string }[];
  /** Whole files moved into `recovered/`: sidecars no marker names, leftover temp files. */
  setAside: { file: string; savedAs: string; reason: string }[];
  /** Sidecars removed because later confirmed markers made every record in them obsolete. */
  removed: string[];
  /**
   * Obsolete sidecars whose removal failed: housekeeping, so open goes on
   * without it (the file is never written again) and the next open retries.
   */
  deferred: { file: string; error: string }[];
}

/** Sidecar files read ahead of the one being matched, so file reads overlap the parsing. */
const READ_AHEAD = 16;

/** A sidecar no marker names (or a leftover temp file): to set aside. */
interface Stray {
  name: string;
  reason: string;
}

/**
 * Rebuilds the index from the directory: streams main.jsonl, replaying each
 * marker into the index as it is read; streams every sidecar the markers
 * name (matching records to markers, folding document heads) and those no
 * marker names; checks that what lies beyond the last marker is one commit
 * call's worth (else main.jsonl lost lines: `StorageCorrupted`); and only
 * then repairs: a torn final marker line and unconfirmed sidecar tails are
 * copied into `recovered/` and cut, sidecars no marker names are moved
 * there, obsolete sidecars are removed. Damaged or missing confirmed data
 * fails with `StorageCorrupted` naming the file and line, before anything
 * is changed.
 */
export async function recover(
  fs: FileSystem,
  directory: string,
  fsync: boolean,
): Promise<{ state: JsonlIndex; report: RecoveryReport }> {
  const path = (file: string) => `${directory}/${file}`;
  const replay = new MarkerReplay();
  const [log, names] = await Promise.all([
    readMarkers(fs, directory, (marker, line) => replay.apply(marker, line)),
    fs.list(directory),
  ]);
  if (log === undefined) {
    const stray = names.find((name) => parseSidecarName(name) !== undefined);
    if (stray !== undefined)
      throw new StorageCorrupted(
        `${MAIN_FILE} is missing but ${stray} exists: this is not a whole storage directory`,
        { file: MAIN_FILE },
      );
  }
  const lastSeq = log?.lastSeq ?? 0;
  const sidecars = log?.sidecars ?? new Map<number, Sidecar>();
  const obsolete = log?.obsolete ?? new Set<string>();

  // Sidecars no marker names (all of it unconfirmed), leftover temp files, obsolete files.
  const unnamed: { name: string; isTask: boolean; id: number }[] = [];
  const strays: Stray[] = [];
  const removals: string[] = [];
  for (const name of names.sort()) {
    const sidecar = parseSidecarName(name);
    if (sidecar === undefined) continue;
    // The name check keeps an id beyond 2^53 (which Number rounds) from matching a real one.
    const named = sidecars.get(sidecarKey(sidecar.task, sidecar.id))?.file === sidecar.file;
    if (sidecar.temp) strays.push({ name, reason: "a temp file left by an interrupted rewrite" });
    else if (!named) unnamed.push({ name, isTask: sidecar.task, id: sidecar.id });
    else if (obsolete.has(name)) removals.push(name);
  }

  // Read every sidecar that still matters, a few ahead in parallel, in a fixed order.
  const toScan = [...sidecars.values()].filter((sidecar) => !obsolete.has(sidecar.file));
  const scans = new Map<string, SidecarScan>();
  const unconfirmed: UnconfirmedRecord[] = [];
  const rewritten: { file: string; line: number; seq: number }[] = [];
  const found: Found = { folds: new Map(), tasks: new Map() };
  let highestConfirmedCall = 0;
  let missingFile: StorageCorrupted | undefined;
  const files = [...toScan.map((sidecar) => sidecar.file), ...unnamed.map((u) => u.name)];
  const readers: (FileLines | undefined)[] = [];
  for (let i = 0; i < files.length; i++) {
    // Making a reader starts its first read.
    while (readers.length < Math.min(i + 1 + READ_AHEAD, files.length))
      readers.push(new FileLines(fs, path(files[readers.length] as string)));
    const lines = readers[i] as FileLines;
    readers[i] = undefined; // its window goes once matched
    if (i < toScan.length) {
      const sidecar = toScan[i] as Sidecar;
      const scan = await scanSidecar(lines, sidecar, lastSeq);
      scans.set(sidecar.file, scan);
      unconfirmed.push(...scan.unconfirmed);
      if (scan.rewrittenAt) rewritten.push({ file: sidecar.file, ...scan.rewrittenAt });
      missingFile ??= scan.missingFile;
      if (scan.highestCall > highestConfirmedCall) highestConfirmedCall = scan.highestCall;
      if (scan.fold) found.folds.set(sidecar.ownerId, scan.fold);
      if (scan.task) found.tasks.set(sidecar.ownerId, scan.task);
    } else {
      const stray = unnamed[i - toScan.length] as (typeof unnamed)[number];
      const scan = await scanUnnamed(lines, stray.name, stray, lastSeq);
      unconfirmed.push(...scan.unconfirmed);
      strays.push({
        name: stray.name,
        reason:
          scan.problem !== undefined
            ? `no marker names it, and ${scan.problem}`
            : scan.unconfirmed.length > 0
              ? "no marker names it: records of a commit call whose markers never landed"
              : "no marker names it, and it holds no complete record",
      });
    }
  }

  checkLostMarkers({
    markers: log?.count ?? 0,
    lastSeq,
    unconfirmed,
    highestConfirmedCall,
    rewritten,
  });
  if (missingFile !== undefined) throw missingFile;
  const state = replay.finish(found);

  const report: RecoveryReport = {
    commits: log?.count ?? 0,
    tornMarkerBytes: log === undefined ? 0 : log.size - log.end,
    truncated: [],
    setAside: [],
    removed: [],
    deferred: [],
  };
  await repair(fs, directory, fsync, { log, scans, strays, removals, report });
  const present = new Set(names);
  for (const [file, scan] of scans)
    if (scan.confirmedEnd > 0 || present.has(file))
      state.files.set(file, { size: scan.confirmedEnd, lines: scan.confirmedLines });
  return { state, report };
}

/**
 * The repairs, in an order that keeps every state a crash or fault can
 * leave recoverable: main.jsonl first (its torn tail copied, then cut, then
 * flushed with fsync, so the markers authorising later removals are
 * durable), then each sidecar tail (copied, then cut), then strays (moved),
 * then obsolete files (removed). A fault stops open, except in a removal
 * (housekeeping: it is reported and retried by the next open); the next
 * open finds the same or less to do, and nothing confirmed is touched.
 */
async function repair(
  fs: FileSystem,
  directory: string,
  fsync: boolean,
  work: {
    log: MarkerLog | undefined;
    scans: ReadonlyMap<string, SidecarScan>;
    strays: readonly Stray[];
    removals: readonly string[];
    report: RecoveryReport;
  },
): Promise<void> {
  const { log, scans, strays, removals, report } = work;
  const path = (file: string) => `${directory}/${file}`;
  const aside = new SetAside(fs, directory, fsync);
  const cuts = [...scans].filter(([, scan]) => scan.size > scan.confirmedEnd);
  if (log === undefined) {
    const created = await fs.openAppend(path(MAIN_FILE));
    await created.close();
  } else if (log.size > log.end) {
    const savedAs = await aside.copyTail(MAIN_FILE, log.end, log.size);
    await fs.truncate(path(MAIN_FILE), log.end);
    report.truncated.push({ file: MAIN_FILE, bytes: log.size - log.end, savedAs });
  }
  const repairs = report.truncated.length > 0 || cuts.length > 0 || strays.length > 0;
  // Nothing to order when nothing is repaired: later commits flush main.jsonl (whole) themselves.
  if (fsync && (repairs || removals.length > 0 || log === undefined))
    await fs.flush(path(MAIN_FILE));
  for (const [file, scan] of cuts) {
    const savedAs = await aside.copyTail(file, scan.confirmedEnd, scan.size);
    await fs.truncate(path(file), scan.confirmedEnd);
    if (fsync) await fs.flush(path(file));
    report.truncated.push({ file, bytes: scan.size - scan.confirmedEnd, savedAs });
  }
  for (const stray of strays) {
    const savedAs = await aside.moveFile(stray.name);
    report.setAside.push({ file: stray.name, savedAs, reason: stray.reason });
  }
  for (const name of removals)
    try {
      await fs.remove(path(name));
      report.removed.push(name);
    } catch (error) {
      report.deferred.push({ file: name, error: String(error) });
    }
  if (fsync && (report.removed.length > 0 || log === undefined)) await fs.flush(directory);
}
