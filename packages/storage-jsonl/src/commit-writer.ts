import type { NewDocumentRecord, TaskRecord } from "@durably/core";
import type { BatchPlan } from "@durably/core/storage";
import type { AppendHandles } from "./append-handles.js";
import type { AppendFile, FileSystem } from "./file-system.js";
import type { FileExtent, JsonlIndex, Placement } from "./jsonl-index.js";
import {
  documentFile,
  encodeMarker,
  encodeRecord,
  taskFile,
  type MarkerWrite,
  type RecordPayload,
} from "./line-format.js";

/** The bytes one `commit` call appends, and where each sidecar record will sit. */
export interface SerializedCall {
  /** Per sidecar file, in order of first use: the text to append and the file's extent after it. */
  sidecars: Map<string, { text: string; extent: FileExtent; isNew: boolean }>;
  /** Every batch's marker, one line each, appended to main.jsonl in one write. */
  markers: string;
  /** `placements[b][w]`: where the sidecar record of batch b's write w (its index as written) goes. */
  placements: (Placement | undefined)[][];
  persistedHighWater: number;
  /** Bytes a compaction would keep (markers with records, rewindable history): the live-data estimate. */
  keptBytes: number;
  /** Bytes appended to main.jsonl. */
  markerBytes: number;
}

export function isTerminal(task: TaskRecord): boolean {
  return task.state.status === "terminal";
}

function newRecordOf(
  record: NewDocumentRecord & { createdAt?: unknown; retiredAt?: unknown },
): NewDocumentRecord {
  const { createdAt: _created, retiredAt: _retired, ...rest } = record;
  return rest;
}

/** Turns prepared batches into format-1 lines (markers reference their sidecar records by `(seq, ordinal)`). */
export function serializeCall(state: JsonlIndex, batches: readonly BatchPlan[]): SerializedCall {
  const sidecars = new Map<string, { text: string; extent: FileExtent; isNew: boolean }>();
  const placements: (Placement | undefined)[][] = [];
  let markers = "";
  let keptBytes = 0;
  let persisted = state.persistedHighWater;
  // Every record names its call by the call's first seq: recovery accepts unconfirmed records of one call only.
  const call = batches[0]?.seq ?? 0;
  for (const batch of batches) {
    const writes: MarkerWrite[] = [];
    const batchPlacements: (Placement | undefined)[] = [];
    let ordinal = 0;
    let hasRecord = false;
    const sidecar = (file: string, payload: RecordPayload, index: number, kept = false): number => {
      const line = encodeRecord({ seq: batch.seq, call, ordinal, payload });
      let chunk = sidecars.get(file);
      if (chunk === undefined) {
        const known = state.files.get(file);
        chunk = {
          text: "",
          extent: { size: known?.size ?? 0, lines: known?.lines ?? 0 },
          isNew: known === undefined,
        };
        sidecars.set(file, chunk);
      }
      const length = Buffer.byteLength(line);
      batchPlacements[index] = { offset: chunk.extent.size, length, line: chunk.extent.lines + 1 };
      chunk.text += line;
      if (kept) keptBytes += length;
      chunk.extent.size += length;
      chunk.extent.lines += 1;
      return ordinal++;
    };
    for (const write of batch.writes) {
      const i = write.index;
      switch (write.type) {
        case "conversation":
        case "entry":
        case "submission":
          hasRecord = true;
          writes.push({ type: write.type, value: write.value } as MarkerWrite);
          break;
        case "task":
          // A terminal task is final: inline, so its sidecar can be reclaimed.
          if (isTerminal(write.value)) {
            hasRecord = true;
            writes.push({ type: "task", value: write.value });
          } else
            writes.push({
              type: "task",
              id: write.value.id,
              ordinal: sidecar(
                taskFile(write.value.id),
                { type: "task", id: write.value.id, value: write.value },
                i,
              ),
            });
          break;
        case "document.create": {
          const id = write.record.id;
          hasRecord = true;
          const content = { type: "document" as const, id, content: write.content };
          const at = sidecar(documentFile(id), content, i, !write.currentOnly);
          const record = newRecordOf(write.record);
          writes.push(
            write.copiedFrom
              ? { type: "document.copy", record, source: write.copiedFrom, ordinal: at }
              : { type: "document.create", record, ordinal: at },
          );
          break;
        }
        case "document.change":
          writes.push({
            type: "document.change",
            id: write.id,
            ordinal: sidecar(
              documentFile(write.id),
              { type: "document", id: write.id, content: write.content },
              i,
              !write.currentOnly,
            ),
          });
          break;
        case "document.retire":
          hasRecord = true;
          writes.push({ type: "document.retire", id: write.id });
          break;
      }
    }
    const highWater = Math.max(state.highWater, batch.highestId);
    const ids = highWater > persisted ? highWater : undefined;
    if (ids !== undefined) persisted = ids;
    const marker = encodeMarker({ seq: batch.seq, writes, ...(ids === undefined ? {} : { ids }) });
    if (hasRecord) keptBytes += Buffer.byteLength(marker);
    markers += marker;
    placements.push(batchPlacements);
  }
  return {
    sidecars,
    markers,
    placements,
    persistedHighWater: persisted,
    keptBytes,
    markerBytes: Buffer.byteLength(markers),
  };
}

async function settleAll(jobs: Promise<void>[]): Promise<void> {
  const results = await Promise.allSettled(jobs);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
}

/**
 * The publication protocol (the package README): (1) append every sidecar record,
 * (2) with fsync flush each touched sidecar (and the directory when a file
 * is new), (3) append all markers to main.jsonl in one write, (4) with
 * fsync flush it. Only then may the caller publish. A marker never reaches
 * the file before its data. Any failure leaves the outcome uncertain: the
 * caller poisons the storage.
 */
export async function writeCall(
  fs: FileSystem,
  directory: string,
  handles: AppendHandles,
  main: AppendFile,
  call: SerializedCall,
  fsync: boolean,
): Promise<void> {
  const files: { handle: AppendFile; text: string }[] = [];
  for (const [file, chunk] of call.sidecars)
    // An open handle is taken without a promise hop: a commit call touches one file per document.
    files.push({ handle: handles.cached(file) ?? (await handles.get(file)), text: chunk.text });
  await settleAll(files.map((f) => f.handle.append(Buffer.from(f.text))));
  if (fsync) {
    const flushes = files.map((f) => f.handle.flush());
    if ([...call.sidecars.values()].some((c) => c.isNew)) flushes.push(fs.flush(directory));
    await settleAll(flushes);
  }
  await main.append(Buffer.from(call.markers));
  if (fsync) await main.flush();
  // Short appends are written on this thread (node-file-system.ts): without a
  // turn of the event loop here, a caller committing in a loop would starve
  // timers and I/O callbacks (a compaction, a lease) for as long as it runs.
  else await new Promise<void>((resolve) => setImmediate(resolve));
}
