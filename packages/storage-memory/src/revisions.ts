import type { StoredRevision } from "@durably/core";

/** Index of the first revision with `seq > at` (revisions are seq-ascending). */
export function upperBoundBySeq(revisions: readonly StoredRevision[], at: number): number {
  let lo = 0;
  let hi = revisions.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((revisions[mid] as StoredRevision).seq <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
