import { StorageCorrupted, StorageVersionError } from "@durably/core";
import { isCurrentOnly } from "@durably/core/storage";
import type { FileSystem } from "./file-system.js";
import {
  decodeMarker,
  documentFile,
  LineError,
  MAIN_FILE,
  taskFile,
  type Marker,
} from "./line-format.js";
import { FileLines } from "./line-reader.js";

/** One sidecar record a marker confirms. */
export interface Ref {
  seq: number;
  ordinal: number;
  /** Line of main.jsonl confirming the record. */
  markerLine: number;
}

/** A sidecar file that markers reference, with its refs in marker order. */
export interface Sidecar {
  file: string;
  isTask: boolean;
  ownerId: number;
  /** Documents: keeps only its current value (so a rewrite may have dropped records before a base). */
  currentOnly: boolean;
  refs: Ref[];
}

/** What main.jsonl holds: how many markers, the sidecars they name, and its unterminated tail. */
export interface MarkerLog {
  count: number;
  /** Sidecars by `sidecarKey`. */
  sidecars: Map<number, Sidecar>;
  /** Sidecar files whose every record a later marker made obsolete (terminal task, retired current-only document). */
  obsolete: Set<string>;
  lastSeq: number;
  /** Offset just past the last complete line; bytes after it are a torn final line. */
  end: number;
  size: number;
}

/** Sidecars are keyed by owner id (ids are unique across kinds), negated for tasks. */
export const sidecarKey = (isTask: boolean, id: number): number => (isTask ? -id : id);

export function corrupted(
  file: string,
  line: number,
  message: string,
  cause?: unknown,
): StorageCorrupted {
  return new StorageCorrupted(
    `${file} line ${line}: ${message}`,
    { file, line },
    cause === undefined ? undefined : { cause },
  );
}

/** The `StorageCorrupted` for a complete line that does not decode (rethrows anything else). */
export function lineProblem(file: string, line: number, error: unknown): StorageCorrupted {
  if (!(error instanceof LineError)) throw error;
  const cause =
    error.unknownFormat !== undefined
      ? new StorageVersionError(`${file} line ${line} is format ${error.unknownFormat}`)
      : error;
  return corrupted(file, line, error.message, cause);
}

/**
 * Streams main.jsonl (never whole: see `FileLines`), decoding every marker,
 * handing it to `apply` (which replays it into the index) and noting which
 * sidecar records it confirms; undefined when the file does not exist. Any complete line that does not decode, or a seq other
 * than the one after the previous marker's, fails with `StorageCorrupted`
 * naming its line.
 */
export async function readMarkers(
  fs: FileSystem,
  directory: string,
  apply: (marker: Marker, line: number) => void,
): Promise<MarkerLog | undefined> {
  let count = 0;
  const sidecars = new Map<number, Sidecar>();
  const currentOnly = new Map<number, boolean>();
  const retired = new Set<number>();
  const taskFinal = new Map<number, boolean>();
  const confirm = (isTask: boolean, id: number, ref: Ref) => {
    const key = sidecarKey(isTask, id);
    let sidecar = sidecars.get(key);
    if (sidecar === undefined) {
      const file = isTask ? taskFile(id) : documentFile(id);
      sidecar = { file, isTask, ownerId: id, currentOnly: false, refs: [] };
      sidecars.set(key, sidecar);
    }
    sidecar.refs.push(ref);
  };
  const lines = new FileLines(fs, `${directory}/${MAIN_FILE}`);
  let previous = 0;
  for (let window = await lines.next(); window; window = await lines.next())
    while (window.next()) {
      const markerLine = window.line;
      let marker: Marker;
      try {
        marker = decodeMarker(window.text(), window);
      } catch (error) {
        throw lineProblem(MAIN_FILE, markerLine, error);
      }
      const seq = marker.seq;
      // Seqs are dealt one after another (a refused batch takes none), so a gap is lost marker lines.
      if (seq !== previous + 1)
        throw corrupted(
          MAIN_FILE,
          markerLine,
          seq <= previous
            ? `marker seq ${seq} is not above seq ${previous}`
            : `marker seq ${seq} follows ${previous === 0 ? "no marker" : `seq ${previous}`}: the markers of seqs ${previous + 1} to ${seq - 1} are missing`,
        );
      previous = seq;
      count++;
      for (const write of marker.writes) {
        if (write.type === "document.create" || write.type === "document.copy") {
          const r = write.record;
          currentOnly.set(r.id, isCurrentOnly(r));
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
      apply(marker, markerLine);
    }
  if (!lines.exists) return undefined;
  const obsolete = new Set<string>();
  for (const [id, only] of currentOnly) {
    const sidecar = sidecars.get(sidecarKey(false, id));
    if (sidecar !== undefined) sidecar.currentOnly = only;
    if (only && retired.has(id)) obsolete.add(documentFile(id));
  }
  for (const [id, final] of taskFinal) if (final) obsolete.add(taskFile(id));
  return {
    count,
    sidecars,
    obsolete,
    lastSeq: previous,
    end: lines.end,
    size: lines.size,
  };
}
