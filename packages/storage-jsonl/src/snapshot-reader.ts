import { StorageCorrupted, StorageVersionError } from "@durably/core";
import type { PlannedWrite } from "@durably/core/storage";
import type { FileSystem } from "./file-system.js";
import { JsonlIndex } from "./jsonl-index.js";
import { documentFile, LineError } from "./line-format.js";
import { FileLines } from "./line-reader.js";
import { sidecarKey, type MarkerSeed, type Sidecar } from "./recovery-markers.js";
import { bytesChecksum } from "./line-checksum.js";
import {
  decodeSnapshotHeader,
  decodeSnapshotLine,
  glanceEntryBytes,
  glancedBytes,
  headAt,
  SNAPSHOT_FILE,
  type SnapshotHeader,
  type SnapshotLine,
} from "./snapshot-format.js";

/** What a generation's snapshot holds: the index at its seq, and the sidecar records it confirms. */
export interface LoadedSnapshot extends MarkerSeed {
  state: JsonlIndex;
  header: SnapshotHeader;
  /** Bytes of the snapshot file. */
  size: number;
}

function problem(where: string, line: number, error: unknown): StorageCorrupted {
  if (!(error instanceof LineError)) throw error;
  const cause =
    error.unknownFormat !== undefined
      ? new StorageVersionError(`${where} line ${line} is format ${error.unknownFormat}`)
      : error;
  return new StorageCorrupted(
    `${where} line ${line}: ${error.message}`,
    { file: where, line },
    { cause },
  );
}

const noRevision = () => undefined;

/**
 * Applies one write at a time under its own seq through the index's own
 * `apply`, which keeps its secondary indexes right. One plan serves every
 * line: `apply` keeps none of the plan, only the records in it.
 */
function oneWriteApplier(state: JsonlIndex): (seq: number, write: PlannedWrite) => void {
  const writes: PlannedWrite[] = [];
  const plan: { seq: number; writes: PlannedWrite[]; highestId: number } = {
    seq: 0,
    writes,
    highestId: 0,
  };
  return (seq, write) => {
    plan.seq = seq;
    writes[0] = write;
    state.apply(plan, noRevision);
  };
}

/**
 * Streams `snapshot.jsonl` of a generation (`where` is its path relative to
 * the storage directory, for messages) into a fresh index. Every line is
 * checked (checksum, shape); the header must come first and `end`, with the
 * right line count, last. Document content is not here: the documents'
 * sidecars are folded by recovery as for any tail, from the `refs` listed.
 */
export async function loadSnapshot(
  fs: FileSystem,
  directory: string,
  where: string,
  generation: number,
): Promise<LoadedSnapshot> {
  const lines = new FileLines(fs, `${directory}/${SNAPSHOT_FILE}`);
  const state = new JsonlIndex();
  state.entriesFrom = where;
  const applyOne = oneWriteApplier(state);
  const sidecars = new Map<number, Sidecar>();
  const currentOnly = new Map<number, boolean>();
  let header: SnapshotHeader | undefined;
  let ended: number | undefined;
  let count = 0;
  // Where the window's next `"head"` is: searched for once per occurrence (-2: not yet, -1: none left).
  let head = -2;
  for (let window = await lines.next(); window; window = await lines.next(), head = -2)
    while (window.next()) {
      const n = window.line;
      count = n;
      if (ended !== undefined)
        throw new StorageCorrupted(`${where} line ${n}: a line after the snapshot's end line`, {
          file: where,
          line: n,
        });
      let decoded: SnapshotLine;
      const text = window.text();
      try {
        if (header === undefined) {
          header = decodeSnapshotHeader(text, window);
          if (header.generation !== generation)
            throw new LineError(
              `the snapshot of generation ${header.generation}, not ${generation}`,
            );
          continue;
        }
        // Most entry lines: indexed from their bytes, checksum checked, decoded on their first read.
        const { bytes, start } = window;
        if (head !== -1 && head < start) head = headAt(bytes, start);
        if (glanceEntryBytes(bytes, start, window.lineEnd, head)) {
          const glance = glancedBytes;
          if (bytesChecksum(bytes, start, glance.crcAt) !== glance.crc)
            throw new LineError("checksum mismatch: the line was changed or damaged");
          if (glance.seq > header.seq)
            throw new LineError(
              `entry ${glance.id} has commit seq ${glance.seq}, after the snapshot's ${header.seq}`,
            );
          state.putSnapshotEntry(glance.id, glance.conversationId, false, text, n);
          continue;
        }
        decoded = decodeSnapshotLine(text, window);
        if (decoded.type === "end" && decoded.lines !== n)
          throw new LineError(`the end line says ${decoded.lines} lines, but it is line ${n}`);
        if (decoded.type === "entry" && decoded.seq > header.seq)
          throw new LineError(
            `entry ${decoded.value.id} has commit seq ${decoded.seq}, after the snapshot's ${header.seq}`,
          );
      } catch (error) {
        throw problem(where, n, error);
      }
      switch (decoded.type) {
        case "conversation":
          applyOne(0, { type: "conversation", index: 0, value: decoded.value });
          break;
        case "entry": {
          // Decoded whole here (a head, or laid out otherwise): kept as its line all the same.
          const { value } = decoded;
          state.putSnapshotEntry(value.id, value.conversationId, value.head != null, text, n);
          break;
        }
        case "task":
          applyOne(0, { type: "task", index: 0, value: decoded.value });
          break;
        case "submission":
          applyOne(0, { type: "submission", index: 0, value: decoded.value });
          break;
        case "document": {
          const { record, refs } = decoded;
          applyOne(record.createdAt, {
            type: "document.create",
            index: 0,
            record,
            content: { kind: "base", version: 1, value: null },
            currentOnly: decoded.currentOnly,
          });
          currentOnly.set(record.id, decoded.currentOnly);
          if (refs.length > 0)
            sidecars.set(sidecarKey(false, record.id), {
              file: documentFile(record.id),
              isTask: false,
              ownerId: record.id,
              currentOnly: decoded.currentOnly,
              refs: refs.map(([seq, ordinal]) => ({ seq, ordinal, markerLine: n, by: where })),
            });
          break;
        }
        case "end":
          ended = n;
          break;
      }
    }
  if (header === undefined || ended === undefined || lines.end !== lines.size)
    throw new StorageCorrupted(
      `${where} line ${count + 1}: the snapshot ends before its end line (${lines.exists ? "cut short" : "missing"})`,
      { file: where, line: count + 1 },
    );
  state.lastSeq = header.seq;
  state.highWater = header.ids;
  return { state, header, size: lines.size, seq: header.seq, sidecars, currentOnly };
}
