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
  MAIN_FILE,
  parseSidecarName,
  splitLines,
  taskFile,
  type Marker,
  type RawLine,
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

interface Ref {
  seq: number;
  ordinal: number;
  /** Line of main.jsonl confirming the record. */
  markerLine: number;
}

interface FoundRecord {
  payload: RecordPayload;
  placement: Placement;
}

interface ParsedMarker extends Marker {
  line: number;
}

function corrupted(file: string, line: number, message: string, cause?: unknown): StorageCorrupted {
  return new StorageCorrupted(
    `${file} line ${line}: ${message}`,
    { file, line },
    cause === undefined ? undefined : { cause },
  );
}

function lineProblem(file: string, raw: RawLine, error: unknown): StorageCorrupted {
  if (!(error instanceof LineError)) throw error;
  const cause =
    error.unknownFormat !== undefined
      ? new StorageVersionError(`${file} line ${raw.line} is format ${error.unknownFormat}`)
      : error;
  return corrupted(file, raw.line, error.message, cause);
}

const key = (seq: number, ordinal: number) => `${seq}:${ordinal}`;

/**
 * Rebuilds the index from the directory (DESIGN 4.3, recovery): cuts a torn
 * final line of main.jsonl, applies only sidecar records confirmed by a
 * marker, cuts unconfirmed sidecar tails and removes files no marker
 * confirms. Confirmed data that is missing, or any complete line that does
 * not verify, fails with `StorageCorrupted` naming the file and line.
 */
export async function recover(
  fs: FileSystem,
  directory: string,
  fsync: boolean,
): Promise<{ state: JsonlState; report: RecoveryReport }> {
  const path = (file: string) => `${directory}/${file}`;
  const report: RecoveryReport = { commits: 0, tornMarkerBytes: 0, truncated: [], removed: [] };
  const mainBytes = await fs.read(path(MAIN_FILE));
  const names = await fs.list(directory);

  // 1. The markers.
  const markers: ParsedMarker[] = [];
  let mainEnd = 0;
  if (mainBytes !== undefined) {
    const { lines, end } = splitLines(mainBytes);
    mainEnd = end;
    report.tornMarkerBytes = mainBytes.length - end;
    let previous = 0;
    for (const raw of lines) {
      let marker: Marker;
      try {
        marker = decodeMarker(raw.text);
      } catch (error) {
        throw lineProblem(MAIN_FILE, raw, error);
      }
      if (marker.seq <= previous)
        throw corrupted(
          MAIN_FILE,
          raw.line,
          `marker seq ${marker.seq} is not above seq ${previous}`,
        );
      previous = marker.seq;
      markers.push({ ...marker, line: raw.line });
    }
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

  // 2. Which sidecar records the markers confirm, and which files only hold superseded data.
  const refs = new Map<string, Ref[]>();
  const rewindable = new Map<number, boolean>();
  const retired = new Set<number>();
  const taskFinal = new Map<number, boolean>();
  for (const marker of markers) {
    for (const write of marker.writes) {
      let file: string | undefined;
      if (write.type === "document.create" || write.type === "document.copy") {
        const r = write.record;
        rewindable.set(r.id, r.scope.kind === "conversation" && r.history === "rewindable");
        file = documentFile(r.id);
      } else if (write.type === "document.change") file = documentFile(write.id);
      else if (write.type === "document.retire") retired.add(write.id);
      else if (write.type === "task") {
        const id = "value" in write ? write.value.id : write.id;
        taskFinal.set(id, "value" in write);
        if (!("value" in write)) file = taskFile(id);
      }
      if (file !== undefined && "ordinal" in write) {
        let list = refs.get(file);
        if (list === undefined) refs.set(file, (list = []));
        list.push({ seq: marker.seq, ordinal: write.ordinal, markerLine: marker.line });
      }
    }
  }
  const obsolete = new Set<string>();
  for (const [id, rewinds] of rewindable)
    if (!rewinds && retired.has(id)) obsolete.add(documentFile(id));
  for (const [id, final] of taskFinal) if (final) obsolete.add(taskFile(id));

  // 3. Read every sidecar that still matters and match its records to the refs.
  const records = new Map<string, Map<string, FoundRecord>>();
  const truncations: { file: string; size: number; bytes: number }[] = [];
  const extents = new Map<string, { size: number; lines: number }>();
  for (const [file, list] of refs) {
    if (obsolete.has(file)) continue;
    const found = await readSidecar(fs, path(file), file, list, lastSeq, rewindable);
    records.set(file, found.records);
    extents.set(file, { size: found.confirmedEnd, lines: found.records.size });
    if (found.fileSize > found.confirmedEnd)
      truncations.push({
        file,
        size: found.confirmedEnd,
        bytes: found.fileSize - found.confirmedEnd,
      });
  }

  // 4. Replay the markers through the same checks a commit runs.
  const state = new JsonlState();
  for (const marker of markers) {
    const writes: StorageWrite[] = [];
    const placements: (Placement | undefined)[] = [];
    const reclaimed = new Set<number>();
    const copies = new Map<number, BaseContent | undefined>();
    for (const write of marker.writes) {
      const index = writes.length;
      const sidecar = (file: string, ordinal: number) =>
        records.get(file)?.get(key(marker.seq, ordinal));
      const content = (file: string, ordinal: number): DocumentContent | undefined => {
        const found = sidecar(file, ordinal);
        if (found === undefined) return undefined;
        if (found.payload.type !== "document")
          throw corrupted(file, found.placement.line, "a task record in a document file");
        placements[index] = found.placement;
        return found.payload.content;
      };
      switch (write.type) {
        case "task": {
          if ("value" in write) writes.push(write);
          else {
            const found = sidecar(taskFile(write.id), write.ordinal);
            if (found === undefined) continue; // superseded by a later replacement
            if (found.payload.type !== "task")
              throw corrupted(
                taskFile(write.id),
                found.placement.line,
                "a document record in a task file",
              );
            writes.push({ type: "task", value: found.payload.value });
          }
          break;
        }
        case "document.create":
        case "document.copy": {
          const file = documentFile(write.record.id);
          const base = content(file, write.ordinal);
          if (base !== undefined && base.kind !== "base")
            throw corrupted(
              file,
              placements[index]?.line ?? 0,
              `document ${write.record.id} starts with a delta, not a base`,
            );
          if (write.type === "document.create") {
            if (base === undefined) reclaimed.add(index);
            writes.push({
              type: "document.create",
              record: write.record,
              content: base ?? PLACEHOLDER_CONTENT,
            });
          } else {
            copies.set(index, base);
            writes.push({
              type: "document.copy",
              record: write.record,
              source: write.source as never,
            });
          }
          break;
        }
        case "document.change": {
          const found = content(documentFile(write.id), write.ordinal);
          if (found === undefined) reclaimed.add(index);
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
    const prepared = await prepareBatch(
      state,
      new CallOverlay(),
      writes,
      marker.seq,
      (index) => Promise.resolve(copies.get(index)),
      reclaimed,
    );
    if ("problem" in prepared)
      throw corrupted(
        MAIN_FILE,
        marker.line,
        `commit seq ${marker.seq} cannot be applied: ${prepared.problem.message}`,
      );
    applyBatch(state, prepared.batch, placements);
    if (marker.ids !== undefined && marker.ids > state.highWater) state.highWater = marker.ids;
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
  if (mainBytes === undefined) {
    const created = await fs.openAppend(path(MAIN_FILE));
    await created.close();
  } else if (report.tornMarkerBytes > 0) await fs.truncate(path(MAIN_FILE), mainEnd);
  if (fsync) await fs.flush(path(MAIN_FILE));
  for (const cut of truncations) {
    await fs.truncate(path(cut.file), cut.size);
    if (fsync) await fs.flush(path(cut.file));
    report.truncated.push({ file: cut.file, bytes: cut.bytes });
  }
  for (const name of names) {
    const sidecar = parseSidecarName(name);
    if (sidecar === undefined) continue;
    if (sidecar.temp || !refs.has(sidecar.file) || obsolete.has(sidecar.file)) {
      await fs.remove(path(name));
      report.removed.push(name);
    }
  }
  if (fsync && (report.removed.length > 0 || mainBytes === undefined)) await fs.flush(directory);
  for (const [file, extent] of extents)
    if (extent.size > 0 || names.includes(file)) state.files.set(file, extent);
  return { state, report };
}

/**
 * Reads one sidecar and matches its records, in order, to the refs confirming
 * them. The file must hold a contiguous run of the refs ending at the last
 * one; only a current-only document (from a base on) or a task may have
 * lost the refs before the run to reclamation. What follows the run is an
 * unconfirmed tail (seq above every marker) to cut.
 */
async function readSidecar(
  fs: FileSystem,
  fullPath: string,
  file: string,
  refs: readonly Ref[],
  lastSeq: number,
  rewindable: ReadonlyMap<number, boolean>,
): Promise<{ records: Map<string, FoundRecord>; confirmedEnd: number; fileSize: number }> {
  const bytes = await fs.read(fullPath);
  const { lines } = splitLines(bytes ?? new Uint8Array(0));
  const index = new Map<string, number>();
  refs.forEach((ref, i) => index.set(key(ref.seq, ref.ordinal), i));
  const records = new Map<string, FoundRecord>();
  const isTask = file.startsWith("task-");
  const ownerId = Number(/-([0-9]+)\.jsonl$/.exec(file)?.[1]);
  let next = -1; // index of the ref the next record must match; -1 before the first
  let confirmedEnd = 0;
  const missing = (ref: Ref, line: number) =>
    corrupted(
      file,
      line,
      `record (seq ${ref.seq}, ordinal ${ref.ordinal}) confirmed by ${MAIN_FILE} line ${ref.markerLine} is missing`,
    );
  for (const raw of lines) {
    let record;
    try {
      record = decodeRecord(raw.text);
    } catch (error) {
      // A complete line inside the unconfirmed tail may be anything a crash left; it is cut.
      if (
        next >= refs.length ||
        (next >= 0 && error instanceof LineError && lineSeq(raw.text) > lastSeq)
      )
        break;
      throw lineProblem(file, raw, error);
    }
    const at = index.get(key(record.seq, record.ordinal));
    if (next >= refs.length || at === undefined) {
      if (record.seq <= lastSeq)
        throw corrupted(
          file,
          raw.line,
          `record (seq ${record.seq}, ordinal ${record.ordinal}) is not confirmed by any marker in ${MAIN_FILE}`,
        );
      break; // the unconfirmed tail starts here
    }
    if (next === -1) {
      const firstIsBase =
        record.payload.type === "document" && record.payload.content.kind === "base";
      const reclaimable = isTask || (rewindable.get(ownerId) === false && firstIsBase);
      if (at > 0 && !reclaimable) throw missing(refs[0] as Ref, raw.line);
      next = at;
    }
    if (at !== next) throw missing(refs[next] as Ref, raw.line);
    const payloadId = record.payload.type === "task" ? record.payload.value.id : record.payload.id;
    if ((record.payload.type === "task") !== isTask || payloadId !== ownerId)
      throw corrupted(
        file,
        raw.line,
        `a record of ${record.payload.type} ${payloadId} does not belong in ${file}`,
      );
    records.set(key(record.seq, record.ordinal), {
      payload: record.payload,
      placement: { offset: raw.offset, length: raw.length, line: raw.line },
    });
    confirmedEnd = raw.offset + raw.length;
    next++;
  }
  if (next < refs.length) {
    const ref = refs[Math.max(next, 0)] as Ref;
    throw missing(ref, records.size + 1);
  }
  return { records, confirmedEnd, fileSize: bytes?.length ?? 0 };
}

/** The seq a damaged line claims, when it still shows one (to tell a torn tail from a damaged record). */
function lineSeq(text: string): number {
  const match = /"seq":([0-9]+)/.exec(text);
  return match ? Number(match[1]) : 0;
}
