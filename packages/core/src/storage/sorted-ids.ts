/**
 * Ascending arrays of unique ids. Ids are minted in increasing order, so an
 * insert is almost always an append; the binary search keeps the rare
 * out-of-order insert (an id written without minting) correct.
 */

/** Index of the first element `>= id` (or `length`). */
export function lowerBound(ids: readonly number[], id: number): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ids[mid] as number) < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first element `> id` (or `length`). */
export function upperBound(ids: readonly number[], id: number): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ids[mid] as number) <= id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function insertId(ids: number[], id: number): void {
  const last = ids[ids.length - 1];
  if (last === undefined || last < id) {
    ids.push(id);
    return;
  }
  const at = lowerBound(ids, id);
  if (ids[at] !== id) ids.splice(at, 0, id);
}

export function removeId(ids: number[], id: number): void {
  const at = lowerBound(ids, id);
  if (ids[at] === id) ids.splice(at, 1);
}

/**
 * Walks `ids` within the inclusive range `[min, max]` in `order`, yielding
 * each id. Cost is O(log n) to position plus O(visited).
 */
export function* walkRange(
  ids: readonly number[],
  min: number,
  max: number,
  order: "ascending" | "descending",
): Generator<number> {
  if (min > max) return;
  if (order === "ascending") {
    for (let i = lowerBound(ids, min); i < ids.length; i++) {
      const id = ids[i] as number;
      if (id > max) return;
      yield id;
    }
  } else {
    for (let i = upperBound(ids, max) - 1; i >= 0; i--) {
      const id = ids[i] as number;
      if (id < min) return;
      yield id;
    }
  }
}
