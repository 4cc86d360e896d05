import { StorageCorrupted, type StorageWrite, type TaskRecord } from "@durably/core";
import { applyBatch } from "./apply-batch.js";
import type { DocumentFold } from "./document-fold.js";
import { JsonlState } from "./jsonl-state.js";
import { MAIN_FILE, taskFile, type Marker } from "./line-format.js";
import { CallOverlay, PLACEHOLDER_CONTENT, prepareBatch } from "./prepare-batch.js";
import { corrupted } from "./recovery-markers.js";

/** What the sidecar scans found. */
export interface Found {
  /** Document id to its folded head. */
  folds: Map<number, DocumentFold>;
  /** Live task id to the newest replacement in its file, and that record's line. */
  tasks: Map<number, { value: TaskRecord; line: number }>;
}

const noCopies = () => Promise.resolve(undefined);

/**
 * Rebuilds the index while main.jsonl streams: each marker is replayed, as
 * soon as it is read, through the checks a commit runs (a refusal here is
 * corruption at the marker's line), so no marker is kept once applied.
 * Sidecar content is not needed for that: document content is folded per
 * file while the files stream (the replay carries placeholders, and
 * `finish` sets each head from its fold), and a live task's value is the
 * newest replacement in its file (`finish` puts it).
 */
export class MarkerReplay {
  readonly state = new JsonlState();
  private readonly overlay = new CallOverlay();

  async apply(marker: Marker, line: number): Promise<void> {
    const writes: StorageWrite[] = [];
    const placeholders = new Set<number>();
    for (const write of marker.writes) {
      switch (write.type) {
        case "task":
          // A live task's value is in its sidecar: the newest one is put by `finish`.
          if ("value" in write) writes.push(write);
          break;
        case "document.create":
          placeholders.add(writes.length);
          writes.push({
            type: "document.create",
            record: write.record,
            content: PLACEHOLDER_CONTENT,
          });
          break;
        case "document.copy":
          writes.push({
            type: "document.copy",
            record: write.record,
            source: write.source as never,
          });
          break;
        case "document.change":
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
    const { state, overlay } = this;
    const prepared = await prepareBatch(state, overlay, writes, marker.seq, noCopies, placeholders);
    if ("problem" in prepared)
      throw corrupted(
        MAIN_FILE,
        line,
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

  /** Puts the live tasks' values and the documents' heads; every live document must have a base. */
  finish(found: Found): JsonlState {
    const state = this.state;
    for (const [id, { value, line }] of found.tasks) {
      if (!state.conversations.has(value.conversationId))
        throw corrupted(
          taskFile(id),
          line,
          `task ${id} names unknown conversation ${value.conversationId}`,
        );
      state.tasks.put(id, value);
    }
    for (const doc of state.documents.values()) {
      const fold = found.folds.get(doc.record.id);
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
}
