import { StorageCorrupted, type StorageWrite, type TaskRecord } from "@durably/core";
import { applyBatch } from "./apply-batch.js";
import type { DocumentFold } from "./document-fold.js";
import { JsonlState } from "./jsonl-state.js";
import { MAIN_FILE, type Marker } from "./line-format.js";
import { CallOverlay, PLACEHOLDER_CONTENT, prepareBatch } from "./prepare-batch.js";
import { corrupted, sidecarKey, type Sidecar } from "./recovery-markers.js";

/** What the sidecar scans found, by `sidecarKey`. */
export interface Found {
  folds: Map<number, DocumentFold>;
  /** Per live task, the value of its newest replacement. */
  tasks: Map<number, TaskRecord>;
}

const noCopies = () => Promise.resolve(undefined);

/** The next ref of a sidecar in replay order: the same order the markers were read in. */
function takeRef(
  sidecars: ReadonlyMap<number, Sidecar>,
  isTask: boolean,
  id: number,
  seq: number,
  ordinal: number,
): { sidecar: Sidecar; last: boolean } {
  const sidecar = sidecars.get(sidecarKey(isTask, id));
  const ref = sidecar?.refs[sidecar.replayed++];
  if (sidecar === undefined || ref === undefined || ref.seq !== seq || ref.ordinal !== ordinal)
    throw new Error(`recovery: replay of seq ${seq} lost its place in ${sidecar?.file ?? id}`);
  return { sidecar, last: sidecar.replayed === sidecar.refs.length };
}

/**
 * Rebuilds the index by replaying every marker through the checks a commit
 * runs (a refusal here is corruption at the marker's line). Document
 * content was already folded per file while it streamed, so the replay
 * carries placeholders for it and the heads are set from the folds at the
 * end; a live task takes its newest replacement only (the earlier ones are
 * superseded).
 */
export async function replayMarkers(
  markers: readonly Marker[],
  sidecars: ReadonlyMap<number, Sidecar>,
  found: Found,
): Promise<JsonlState> {
  const state = new JsonlState();
  const overlay = new CallOverlay();
  for (let m = 0; m < markers.length; m++) {
    const marker = markers[m] as Marker;
    const writes: StorageWrite[] = [];
    const placeholders = new Set<number>();
    for (const write of marker.writes) {
      switch (write.type) {
        case "task": {
          if ("value" in write) writes.push(write);
          else if (takeRef(sidecars, true, write.id, marker.seq, write.ordinal).last) {
            const value = found.tasks.get(write.id);
            // An obsolete file (a later inline terminal value) was not read: that value stands.
            if (value !== undefined) writes.push({ type: "task", value });
          }
          break;
        }
        case "document.create":
        case "document.copy":
          takeRef(sidecars, false, write.record.id, marker.seq, write.ordinal);
          placeholders.add(writes.length);
          writes.push(
            write.type === "document.create"
              ? { type: "document.create", record: write.record, content: PLACEHOLDER_CONTENT }
              : { type: "document.copy", record: write.record, source: write.source as never },
          );
          break;
        case "document.change":
          takeRef(sidecars, false, write.id, marker.seq, write.ordinal);
          placeholders.add(writes.length);
          writes.push({
            type: "document.change",
            id: write.id as never,
            content: PLACEHOLDER_CONTENT,
          });
          break;
        default:
          writes.push(write as StorageWrite);
      }
    }
    const prepared = await prepareBatch(state, overlay, writes, marker.seq, noCopies, placeholders);
    if ("problem" in prepared)
      throw corrupted(
        MAIN_FILE,
        m + 1,
        `commit seq ${marker.seq} cannot be applied: ${prepared.problem.message}`,
      );
    applyBatch(state, prepared.batch, []);
    if (marker.ids !== undefined && marker.ids > state.highWater) state.highWater = marker.ids;
    // One overlay serves every marker: each is applied before the next is checked.
    if (overlay.conversations.size > 0) overlay.conversations.clear();
    if (overlay.entries.size > 0) overlay.entries.clear();
    if (overlay.documents.size > 0) overlay.documents.clear();
    if (overlay.addresses.size > 0) overlay.addresses.clear();
  }
  for (const doc of state.documents.values()) {
    const fold = found.folds.get(sidecarKey(false, doc.record.id));
    const live = doc.record.retiredAt === undefined;
    if (fold !== undefined) {
      doc.newestBaseSeq = fold.newestBaseSeq;
      doc.deltasSinceBase = fold.deltasSinceBase;
      doc.revisions = live || !doc.currentOnly ? fold.revisions : [];
      if (live) doc.current = fold.current;
    }
    if (live && doc.current === undefined)
      throw new StorageCorrupted(
        `${doc.file}: document ${doc.record.id} has no base revision on disk`,
        { file: doc.file, documentId: doc.record.id },
      );
  }
  state.persistedHighWater = state.highWater;
  return state;
}
