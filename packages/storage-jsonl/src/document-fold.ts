import { applyOps, InvalidOp, type DocumentContent } from "@durably/core";
import type { Json } from "@durably/core";
import type { Placement, RevisionRef } from "./jsonl-index.js";
import { corrupted } from "./recovery-markers.js";

type Current = { version: number; value: Json };

/**
 * One document's confirmed revisions folded, in file order, into what the
 * index keeps: the current value, the newest base, the deltas since it and
 * where each revision a read may need sits. Open folds each file while it
 * streams it, so a document's history is never held in memory: only its
 * head. The checks are those a commit runs (a file starts with a base, a
 * delta keeps its document's version and applies); a failure is corruption
 * at the record's file and line.
 */
export class DocumentFold {
  current: Current | undefined;
  deltasSinceBase = 0;
  newestBaseSeq = 0;
  revisions: RevisionRef[] = [];

  constructor(
    readonly file: string,
    readonly id: number,
    readonly currentOnly: boolean,
  ) {}

  add(seq: number, content: DocumentContent, at: Placement): void {
    const revision = { seq, base: content.kind === "base", ...at };
    if (content.kind === "base") {
      this.current = { version: content.version, value: content.value };
      this.newestBaseSeq = seq;
      this.deltasSinceBase = 0;
      // Current-only: the revisions before the newest base are never read again.
      if (this.currentOnly) this.revisions = [];
      this.revisions.push(revision);
      return;
    }
    const current = this.current;
    if (current === undefined)
      throw corrupted(this.file, at.line, `document ${this.id} starts with a delta, not a base`);
    if (content.version !== current.version)
      throw corrupted(
        this.file,
        at.line,
        `document ${this.id}: a delta for version ${content.version} on version ${current.version}`,
      );
    try {
      current.value = applyOps(current.value, content.ops);
    } catch (error) {
      if (!(error instanceof InvalidOp)) throw error;
      throw corrupted(
        this.file,
        at.line,
        `document ${this.id}: the delta of seq ${seq} does not apply: ${error.message}`,
        error,
      );
    }
    this.deltasSinceBase += 1;
    this.revisions.push(revision);
  }
}
