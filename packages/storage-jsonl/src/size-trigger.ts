import type { SerializedCall } from "./commit-writer.js";
import type { JsonlIndex } from "./jsonl-index.js";

/** When a compaction starts by itself (`openJsonlStorage`'s `compaction` option). */
export interface CompactionOptions {
  /**
   * Compact once the generation's files hold this many times the bytes a
   * compaction would keep (default 4).
   */
  ratio?: number;
  /** ...and hold at least this many bytes (default 8 MiB), so small storages never churn. */
  minBytes?: number;
}

/** main.jsonl growth between two size checks (a check sums the sidecars' sizes). */
const CHECK_EVERY = 64 * 1024;

/**
 * Decides when the log has grown several times the live data. The live
 * data is estimated, not measured: the snapshot, the marker lines that
 * carry records (entries, conversations, submissions, terminal tasks,
 * document records), and each document's kept revisions (from its first
 * kept revision to the end of its file). Churn (changes to current-only
 * documents, live task replacements) only grows the log.
 */
export class SizeTrigger {
  private readonly ratio: number;
  private readonly minBytes: number;
  private mainBytes: number;
  private keptMarkerBytes: number;
  private snapshotBytes: number;
  private checkedAt: number;

  constructor(
    options: CompactionOptions,
    start: { snapshotBytes: number; mainBytes: number; keptMarkerBytes: number },
  ) {
    this.ratio = options.ratio ?? 4;
    this.minBytes = options.minBytes ?? 8 * 1024 * 1024;
    if (!(this.ratio > 1))
      throw new RangeError(`compaction.ratio must be above 1, got ${this.ratio}`);
    if (!(this.minBytes >= 0))
      throw new RangeError(`compaction.minBytes must be 0 or more, got ${this.minBytes}`);
    this.snapshotBytes = start.snapshotBytes;
    this.mainBytes = start.mainBytes;
    this.keptMarkerBytes = start.keptMarkerBytes;
    this.checkedAt = 0;
  }

  /** Notes a stored commit call; true when a compaction is due. */
  grew(call: SerializedCall, state: JsonlIndex): boolean {
    this.mainBytes += call.markerBytes;
    this.keptMarkerBytes += call.keptBytes;
    if (this.mainBytes - this.checkedAt < CHECK_EVERY) return false;
    this.checkedAt = this.mainBytes;
    let files = 0;
    for (const extent of state.files.values()) files += extent.size;
    let keptRevisions = 0;
    for (const doc of state.documents.values()) {
      const first = doc.revisions[0];
      const last = doc.revisions[doc.revisions.length - 1];
      if (first !== undefined && last !== undefined)
        keptRevisions += last.offset + last.length - first.offset;
    }
    const total = this.snapshotBytes + this.mainBytes + files;
    const live = this.snapshotBytes + this.keptMarkerBytes + keptRevisions;
    return total >= this.minBytes && total >= this.ratio * live;
  }

  /** Marks the capture of a compaction: what is kept of main.jsonl after it goes to the new tail. */
  captured(): number {
    return this.keptMarkerBytes;
  }

  /** Starts over on a new generation, whose tail holds what was committed since `captured`. */
  compacted(result: { snapshotBytes: number; tailBytes: number }, keptAtCapture: number): void {
    this.snapshotBytes = result.snapshotBytes;
    this.mainBytes = result.tailBytes;
    this.keptMarkerBytes -= keptAtCapture;
    this.checkedAt = result.tailBytes;
  }
}
