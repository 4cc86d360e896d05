import type { JsonPath } from "../domain/json.js";
import type { Op } from "../domain/ops.js";

/** How many leading characters of the new string locate a candidate overlap. */
const PROBE_LENGTH = 16;
/** At most this many candidate overlaps are verified before falling back to a set. */
const MAX_CANDIDATES = 32;

/**
 * The ops that turn string `before` at `path` into `after`, favouring the
 * shapes streaming produces: `a` when `after` extends `before`, `t` when it
 * is a suffix of it, `t` + `a` when a bounded tail window slid (the kept
 * part of `before` is a prefix of `after`), else a plain `s`.
 */
export function stringOps(path: JsonPath, before: string, after: string): Op[] {
  if (before === after) return [];
  if (after.startsWith(before)) return [["a", path, after.slice(before.length)]];
  if (before.endsWith(after)) return [["t", path, before.length - after.length]];
  const slid = slideOffset(before, after);
  if (slid !== undefined) {
    const kept = before.length - slid;
    return [
      ["t", path, slid],
      ["a", path, after.slice(kept)],
    ];
  }
  return [["s", path, after]];
}

/**
 * Smallest k > 0 such that `before.slice(k)` is a proper prefix of `after`
 * (so after = before.slice(k) + tail, tail non-empty). Candidates are found
 * with a native `indexOf` of a short probe and at most MAX_CANDIDATES are
 * verified, so the cost stays linear in the string length.
 */
function slideOffset(before: string, after: string): number | undefined {
  if (before.length === 0 || after.length === 0) return undefined;
  const probe = after.slice(0, Math.min(PROBE_LENGTH, after.length));
  let k = before.indexOf(probe, 1);
  for (let tries = 0; k !== -1 && tries < MAX_CANDIDATES; tries++) {
    const kept = before.length - k;
    if (kept < after.length && after.startsWith(before.slice(k))) return k;
    k = before.indexOf(probe, k + 1);
  }
  return undefined;
}
