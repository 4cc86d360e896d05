import { StorageCorrupted, type StorageWrite, type TaskRecord } from "@durably/core";
import { indexPlanView, isProblem, planBatch, type BaseContent } from "@durably/core/storage";
import type { DocumentFold } from "./document-fold.js";
import { JsonlIndex } from "./jsonl-index.js";
import { documentFile, MAIN_FILE, taskFile, type Marker } from "./line-format.js";
import { corrupted } from "./recovery-markers.js";

/** What the sidecar scans found. */
export interface Found {
  /** Document id to its folded head. */
  folds: Map<number, DocumentFold>;
  /** Live task id to the newest replacement in its file, and that record's line. */
  tasks: Map<number, { value: TaskRecord; line: number }>;
}

/**
 * Document content on replay: the marker names sidecar records, whose
 * content is folded per file instead. Every content write is replayed as
 * this base, so the planner checks what markers alone can show (ids,
 * addresses, liveness, conversations); `finish` replaces every placeholder.
 */
const PLACEHOLDER: BaseContent = Object.freeze({ kind: "base", version: 1, value: null });

function noHistory(): never {
  throw new Error("replay plans no copy at a seq: copies replay as creations");
}

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
  readonly state = new JsonlIndex();

  apply(marker: Marker, line: number): void {
    const writes: StorageWrite[] = [];
    for (const write of marker.writes) {
      switch (write.type) {
        case "task":
          // A live task's value is in its sidecar: the newest one is put by `finish`.
          if ("value" in write) writes.push(write);
          break;
        case "document.create":
        case "document.copy":
          // A copy's base is the first record of its own sidecar, folded like any other.
          writes.push({ type: "document.create", record: write.record, content: PLACEHOLDER });
          break;
        case "document.change":
          writes.push({ type: "document.change", id: write.id as never, content: PLACEHOLDER });
          break;
        default:
          writes.push(write as StorageWrite);
      }
    }
    const state = this.state;
    const planned = planBatch(writes, indexPlanView(state, noHistory), marker.seq);
    if (isProblem(planned))
      throw corrupted(
        MAIN_FILE,
        line,
        `commit seq ${marker.seq} cannot be applied: ${planned.message}`,
      );
    state.apply(planned, () => undefined);
    if (marker.ids !== undefined && marker.ids > state.highWater) state.highWater = marker.ids;
  }

  /** Puts the live tasks' values and the documents' heads; every live document must have a base. */
  finish(found: Found): JsonlIndex {
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
      // Replay left placeholders: only what the file holds counts.
      doc.current = undefined;
      if (fold !== undefined) {
        doc.newestBaseSeq = fold.newestBaseSeq;
        doc.revisions = live || !doc.currentOnly ? fold.revisions : [];
        if (live && fold.current !== undefined)
          doc.current = { ...fold.current, deltasSinceBase: fold.deltasSinceBase };
      }
      if (live && doc.current === undefined) {
        const file = documentFile(doc.record.id);
        throw new StorageCorrupted(
          `${file}: document ${doc.record.id} has no base revision on disk`,
          {
            file,
            documentId: doc.record.id,
          },
        );
      }
    }
    state.persistedHighWater = state.highWater;
    return state;
  }
}
