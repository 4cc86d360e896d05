import {
  StorageCorrupted,
  StorageVersionError,
  type BaseContent,
  type DocumentContent,
  type StorageWrite,
} from "@durably/core";
import { applyBatch, type Placement } from "./apply-batch.js";
import type { FileSystem } from "./file-system.js";
import { JsonlState } from "./jsonl-state.js";
import {
  decodeMarker,
  decodeRecord,
  documentFile,
  LineError,
  LineCursor,
  MAIN_FILE,
  parseSidecarName,
  taskFile,
  type Marker,
  type RecordPayload,
} from "./line-format.js";
import { CallOverlay, PLACEHOLDER_CONTENT, prepareBatch } from "./prepare-batch.js";

/** What open found and repaired; nothing in it was confirmed (or it was superseded and reclaimable). */
export interface RecoveryReport {
  /** Commits found in main.jsonl. */
  commits: number;
  /** Bytes of an unterminated (torn) final line cut from main.jsonl. */
  tornMarkerBytes: number;
  /** Sidecar files whose unconfirmed tail was cut, with the bytes cut. */
  truncated: { file: string; bytes: number }[];
  /** Sidecar files removed: unconfirmed (no marker names them), obsolete, or leftover temp files. */
  removed: string[];
}

/** One sidecar record a marker confirms, and (once its file is read) what the file holds for it. */
interface Ref {
  seq: number;
  ordinal: number;
  /** Line of main.jsonl confirming the record. */
  markerLine: number;
  /** The record found in the file; undefined when reclaimed, or when the file is not read. */
  payload?: RecordPayload;
  placement?: Placement;
}

/** A sidecar file that markers reference, with its refs in marker order. */
interface Sidecar {
  file: string;
  isTask: boolean;
  ownerId: number;
  refs: Ref[];
  /** How many refs the replay (step 4) has consumed. */
  replayed: number;
}

/** Sidecars are keyed by owner id (ids are unique across kinds), negated for tasks. */
const sidecarKey = (isTask: boolean, id: number) => (isTask ? -id : id);

/** Sidecar files read ahead of the one being matched, so file reads overlap the parsing. */
const READ_AHEAD = 16;

function corrupted(file: string, line: number, message: string, cause?: unknown): StorageCorrupted {
  return new StorageCorrupted(
    `${file} line ${line}: ${message}`,
    { file, line },
    cause === undefined ? undefined : { cause },
  );
}

function lineProblem(file: string, line: number, error: unknown): StorageCorrupted {
  if (!(error instanceof LineError)) throw error;
  const cause =
    error.unknownFormat !== undefined
      ? new StorageVersionError(`${file} line ${line} is format ${error.unknownFormat}`)
      : error;
  return corrupted(file, line, error.message, cause);
}

const noCopies = () => Promise.resolve(undefined);

/**
 * Rebuilds the index from the directory (recovery on open): cuts a torn
 * final line of main.jsonl, applies only sidecar records confirmed by a
 * marker, cuts unconfirmed sidecar tails and removes files no marker
 * confirms. Confirmed data that is missing, or any complete line that does
 * not verify, fails with `StorageCorrupted` naming the file and line.
 *
 * Cost is proportional to the bytes read: every line is decoded and parsed
 * once, straight from the file's buffer; records are matched to their
 * markers by position, not through maps of string keys.
 */
export async function recover(
  fs: FileSystem,
  directory: string,
  fsync: boolean,
): Promise<{ state: JsonlState; report: RecoveryReport }> {
  const path = (file: string) => `${directory}/${file}`;
  const report: RecoveryReport = { commits: 0, tornMarkerBytes: 0, truncated: [], removed: [] };
  const [mainBytes, names] = await Promise.all([fs.read(path(MAIN_FILE)), fs.list(directory)]);

  // 1. The markers, and (2.) which sidecar records they confirm and which files only hold superseded data.
  const markers: Marker[] = [];
  const markerLines: number[] = [];
  const sidecars = new Map<number, Sidecar>();
  const rewindable = new Map<number, boolean>();
  const retired = new Set<number>();
  const taskFinal = new Map<number, boolean>();
  const confirm = (isTask: boolean, id: number, ref: Ref) => {
    const key = sidecarKey(isTask, id);
    let sidecar = sidecars.get(key);
    if (sidecar === undefined) {
      const file = isTask ? taskFile(id) : documentFile(id);
      sidecars.set(key, (sidecar = { file, isTask, ownerId: id, refs: [], replayed: 0 }));
    }
    sidecar.refs.push(ref);
  };
  let mainEnd = 0;
  if (mainBytes !== undefined) {
    const lines = new LineCursor(mainBytes);
    let previous = 0;
    while (lines.next()) {
      let marker: Marker;
      try {
        marker = decodeMarker(lines.text(), lines);
      } catch (error) {
        throw lineProblem(MAIN_FILE, lines.line, error);
      }
      if (marker.seq <= previous)
        throw corrupted(
          MAIN_FILE,
          lines.line,
          `marker seq ${marker.seq} is not above seq ${previous}`,
        );
      previous = marker.seq;
      markers.push(marker);
      markerLines.push(lines.line);
      const seq = marker.seq;
      const markerLine = lines.line;
      for (const write of marker.writes) {
        if (write.type === "document.create" || write.type === "document.copy") {
          const r = write.record;
          rewindable.set(r.id, r.scope.kind === "conversation" && r.history === "rewindable");
          confirm(false, r.id, { seq, ordinal: write.ordinal, markerLine });
        } else if (write.type === "document.change")
          confirm(false, write.id, { seq, ordinal: write.ordinal, markerLine });
        else if (write.type === "document.retire") retired.add(write.id);
        else if (write.type === "task") {
          if ("value" in write) taskFinal.set(write.value.id, true);
          else {
            taskFinal.set(write.id, false);
            confirm(true, write.id, { seq, ordinal: write.ordinal, markerLine });
          }
        }
      }
    }
    mainEnd = lines.end;
    report.tornMarkerBytes = mainBytes.length - mainEnd;
  } else {
    const stray = names.find((name) => parseSidecarName(name) !== undefined);
    if (stray !== undefined)
      throw new StorageCorrupted(
        `${MAIN_FILE} is missing but ${stray} exists: this is not a whole storage directory`,
        {
          file: MAIN_FILE,
        },
      );
  }
  report.commits = markers.length;
  const lastSeq = markers[markers.length - 1]?.seq ?? 0;
  const obsolete = new Set<string>();
  for (const [id, rewinds] of rewindable)
    if (!rewinds && retired.has(id)) obsolete.add(documentFile(id));
  for (const [id, final] of taskFinal) if (final) obsolete.add(taskFile(id));

  // 3. Read every sidecar that still matters (a few ahead, in parallel) and match its records to the refs.
  const truncations: { file: string; size: number; bytes: number }[] = [];
  const extents = new Map<string, { size: number; lines: number }>();
  const toRead = [...sidecars.values()].filter((sidecar) => !obsolete.has(sidecar.file));
  const reads: (Promise<Uint8Array | undefined> | undefined)[] = [];
  const readAhead = (upTo: number) => {
    for (let i = reads.length; i < Math.min(upTo, toRead.length); i++) {
      const read = fs.read(path((toRead[i] as Sidecar).file));
      // Handled here so a read left in flight by an earlier failure is not an unhandled rejection.
      read.catch(() => undefined);
      reads.push(read);
    }
  };
  for (let i = 0; i < toRead.length; i++) {
    readAhead(i + 1 + READ_AHEAD);
    const sidecar = toRead[i] as Sidecar;
    const bytes = await (reads[i] as Promise<Uint8Array | undefined>);
    reads[i] = undefined; // the buffer goes once matched
    const found = matchSidecar(bytes ?? new Uint8Array(0), sidecar, lastSeq, rewindable);
    extents.set(sidecar.file, { size: found.confirmedEnd, lines: found.count });
    if (found.fileSize > found.confirmedEnd)
      truncations.push({
        file: sidecar.file,
        size: found.confirmedEnd,
        bytes: found.fileSize - found.confirmedEnd,
      });
  }

  // 4. Replay the markers through the same checks a commit runs.
  const state = new JsonlState();
  const overlay = new CallOverlay();
  for (let m = 0; m < markers.length; m++) {
    const marker = markers[m] as Marker;
    const writes: StorageWrite[] = [];
    const placements: (Placement | undefined)[] = [];
    let reclaimed: Set<number> | undefined;
    let copies: Map<number, BaseContent | undefined> | undefined;
    for (const write of marker.writes) {
      const index = writes.length;
      switch (write.type) {
        case "task": {
          if ("value" in write) writes.push(write);
          else {
            const ref = replayRef(sidecars, true, write.id, marker.seq, write.ordinal);
            if (ref.payload === undefined) continue; // superseded by a later replacement
            if (ref.payload.type !== "task")
              throw corrupted(
                taskFile(write.id),
                ref.placement?.line ?? 0,
                "a document record in a task file",
              );
            writes.push({ type: "task", value: ref.payload.value });
          }
          break;
        }
        case "document.create":
        case "document.copy": {
          const file = documentFile(write.record.id);
          const ref = replayRef(sidecars, false, write.record.id, marker.seq, write.ordinal);
          const base = documentContent(file, ref, placements, index);
          if (base !== undefined && base.kind !== "base")
            throw corrupted(
              file,
              placements[index]?.line ?? 0,
              `document ${write.record.id} starts with a delta, not a base`,
            );
          if (write.type === "document.create") {
            if (base === undefined) (reclaimed ??= new Set()).add(index);
            writes.push({
              type: "document.create",
              record: write.record,
              content: base ?? PLACEHOLDER_CONTENT,
            });
          } else {
            (copies ??= new Map()).set(index, base);
            writes.push({
              type: "document.copy",
              record: write.record,
              source: write.source as never,
            });
          }
          break;
        }
        case "document.change": {
          const ref = replayRef(sidecars, false, write.id, marker.seq, write.ordinal);
          const found = documentContent(documentFile(write.id), ref, placements, index);
          if (found === undefined) (reclaimed ??= new Set()).add(index);
          writes.push({
            type: "document.change",
            id: write.id as never,
            content: found ?? PLACEHOLDER_CONTENT,
          });
          break;
        }
        default:
          writes.push(write as StorageWrite);
      }
    }
    const resolveCopy =
      copies === undefined
        ? noCopies
        : (index: number) => Promise.resolve((copies as Map<number, BaseContent>).get(index));
    const prepared = await prepareBatch(state, overlay, writes, marker.seq, resolveCopy, reclaimed);
    if ("problem" in prepared)
      throw corrupted(
        MAIN_FILE,
        markerLines[m] as number,
        `commit seq ${marker.seq} cannot be applied: ${prepared.problem.message}`,
      );
    applyBatch(state, prepared.batch, placements);
    if (marker.ids !== undefined && marker.ids > state.highWater) state.highWater = marker.ids;
    // One overlay serves every marker: each is applied before the next is checked.
    if (overlay.conversations.size > 0) overlay.conversations.clear();
    if (overlay.entries.size > 0) overlay.entries.clear();
    if (overlay.documents.size > 0) overlay.documents.clear();
    if (overlay.addresses.size > 0) overlay.addresses.clear();
  }
  for (const doc of state.documents.values())
    if (doc.record.retiredAt === undefined && doc.current === undefined)
      throw new StorageCorrupted(
        `${doc.file}: document ${doc.record.id} has no base revision on disk`,
        {
          file: doc.file,
          documentId: doc.record.id,
        },
      );
  state.persistedHighWater = state.highWater;

  // 5. Repairs. Markers first: with fsync the markers authorising a removal are made durable before it.
  const removals = names.filter((name) => {
    const sidecar = parseSidecarName(name);
    if (sidecar === undefined) return false;
    // The name check keeps an id beyond 2^53 (which Number rounds) from matching a real one.
    const confirmed = sidecars.get(sidecarKey(sidecar.task, sidecar.id))?.file === sidecar.file;
    return sidecar.temp || !confirmed || obsolete.has(sidecar.file);
  });
  const repairs = report.tornMarkerBytes > 0 || truncations.length > 0 || removals.length > 0;
  if (mainBytes === undefined) {
    const created = await fs.openAppend(path(MAIN_FILE));
    await created.close();
  } else if (report.tornMarkerBytes > 0) await fs.truncate(path(MAIN_FILE), mainEnd);
  // Nothing to order when nothing is repaired: later commits flush main.jsonl (whole) themselves.
  if (fsync && (repairs || mainBytes === undefined)) await fs.flush(path(MAIN_FILE));
  for (const cut of truncations) {
    await fs.truncate(path(cut.file), cut.size);
    if (fsync) await fs.flush(path(cut.file));
    report.truncated.push({ file: cut.file, bytes: cut.bytes });
  }
  for (const name of removals) {
    await fs.remove(path(name));
    report.removed.push(name);
  }
  if (fsync && (removals.length > 0 || mainBytes === undefined)) await fs.flush(directory);
  const present = new Set(names);
  for (const [file, extent] of extents)
    if (extent.size > 0 || present.has(file)) state.files.set(file, extent);
  return { state, report };
}

/** The next ref of a sidecar in replay order: the same order step 2 recorded them in. */
function replayRef(
  sidecars: ReadonlyMap<number, Sidecar>,
  isTask: boolean,
  id: number,
  seq: number,
  ordinal: number,
): Ref {
  const sidecar = sidecars.get(sidecarKey(isTask, id));
  const ref = sidecar?.refs[sidecar.replayed++];
  if (ref === undefined || ref.seq !== seq || ref.ordinal !== ordinal)
    throw new Error(`recovery: replay of seq ${seq} lost its place in ${sidecar?.file ?? id}`);
  return ref;
}

/** The document content a ref found (recording where it sits), or undefined when reclaimed. */
function documentContent(
  file: string,
  ref: Ref,
  placements: (Placement | undefined)[],
  index: number,
): DocumentContent | undefined {
  const payload = ref.payload;
  if (payload === undefined) return undefined;
  if (payload.type !== "document")
    throw corrupted(file, ref.placement?.line ?? 0, "a task record in a document file");
  placements[index] = ref.placement;
  return payload.content;
}

/** Index of the ref `(seq, ordinal)` names, or -1. */
function findRef(refs: readonly Ref[], seq: number, ordinal: number): number {
  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i] as Ref;
    if (ref.seq === seq && ref.ordinal === ordinal) return i;
  }
  return -1;
}

/**
 * Matches one sidecar's records, in order, to the refs confirming them
 * (storing each found record on its ref). The file must hold a contiguous
 * run of the refs ending at the last one; only a current-only document
 * (from a base on) or a task may have lost the refs before the run to
 * reclamation. What follows the run is an unconfirmed tail (seq above
 * every marker) to cut.
 */
function matchSidecar(
  bytes: Uint8Array,
  sidecar: Sidecar,
  lastSeq: number,
  rewindable: ReadonlyMap<number, boolean>,
): { count: number; confirmedEnd: number; fileSize: number } {
  const { file, refs, isTask, ownerId } = sidecar;
  const lines = new LineCursor(bytes);
  let next = -1; // index of the ref the next record must match; -1 before the first
  let count = 0;
  let confirmedEnd = 0;
  const missing = (ref: Ref, line: number) =>
    corrupted(
      file,
      line,
      `record (seq ${ref.seq}, ordinal ${ref.ordinal}) confirmed by ${MAIN_FILE} line ${ref.markerLine} is missing`,
    );
  while (lines.next()) {
    const text = lines.text();
    let record;
    try {
      record = decodeRecord(text, lines);
    } catch (error) {
      // A complete line inside the unconfirmed tail may be anything a crash left; it is cut.
      if (
        next >= refs.length ||
        (next >= 0 && error instanceof LineError && lineSeq(text) > lastSeq)
      )
        break;
      throw lineProblem(file, lines.line, error);
    }
    // Records normally follow their refs one for one: look further only when one does not.
    const expected = next >= 0 ? refs[next] : refs[0];
    const at =
      next >= refs.length
        ? -1
        : expected !== undefined &&
            expected.seq === record.seq &&
            expected.ordinal === record.ordinal
          ? Math.max(next, 0)
          : findRef(refs, record.seq, record.ordinal);
    if (at < 0) {
      if (record.seq <= lastSeq)
        throw corrupted(
          file,
          lines.line,
          `record (seq ${record.seq}, ordinal ${record.ordinal}) is not confirmed by any marker in ${MAIN_FILE}`,
        );
      break; // the unconfirmed tail starts here
    }
    if (next === -1) {
      const firstIsBase =
        record.payload.type === "document" && record.payload.content.kind === "base";
      const reclaimable = isTask || (rewindable.get(ownerId) === false && firstIsBase);
      if (at > 0 && !reclaimable) throw missing(refs[0] as Ref, lines.line);
      next = at;
    }
    if (at !== next) throw missing(refs[next] as Ref, lines.line);
    const payloadId = record.payload.type === "task" ? record.payload.value.id : record.payload.id;
    if ((record.payload.type === "task") !== isTask || payloadId !== ownerId)
      throw corrupted(
        file,
        lines.line,
        `a record of ${record.payload.type} ${payloadId} does not belong in ${file}`,
      );
    const ref = refs[at] as Ref;
    ref.payload = record.payload;
    ref.placement = { offset: lines.offset, length: lines.length, line: lines.line };
    confirmedEnd = lines.offset + lines.length;
    count++;
    next++;
  }
  if (next < refs.length) {
    const ref = refs[Math.max(next, 0)] as Ref;
    throw missing(ref, count + 1);
  }
  return { count, confirmedEnd, fileSize: bytes.length };
}

/** The seq a damaged line claims, when it still shows one (to tell a torn tail from a damaged record). */
function lineSeq(text: string): number {
  const match = /"seq":([0-9]+)/.exec(text);
  return match ? Number(match[1]) : 0;
}
