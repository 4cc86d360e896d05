import type { IndexItem } from "./documents.js";

/*
 * A namespace's checkpoints sorted by id (string order, as LangGraph's savers
 * sort them: the newest checkpoint is the greatest id, not the last written).
 */

/** First position whose id is not below `id`. Reads only `items[i][0]`, so it also works on a draft. */
export function lowerBound(items: readonly (readonly [string, number])[], id: string): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((items[mid] as readonly [string, number])[0] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The entry holding checkpoint `id`, if the index has it. */
export function findEntry(items: readonly IndexItem[], id: string): number | undefined {
  const at = lowerBound(items, id);
  const item = items[at];
  return item !== undefined && item[0] === id ? item[1] : undefined;
}

/**
 * Records that checkpoint `id` is now in `entry` (a checkpoint put again with
 * the same id replaces the earlier one, as LangGraph's savers do). Appending
 * is the common case: ids are time-ordered uuid6, so one array op per put.
 */
export function insertEntry(items: IndexItem[], id: string, entry: number): void {
  const last = items[items.length - 1];
  if (last === undefined || last[0] < id) {
    items.push([id, entry]);
    return;
  }
  const at = lowerBound(items, id);
  const item = items[at];
  if (item !== undefined && item[0] === id) items[at] = [id, entry];
  else items.splice(at, 0, [id, entry]);
}
