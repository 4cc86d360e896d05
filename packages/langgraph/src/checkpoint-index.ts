import type { IndexItem } from "./documents.js";
import { PAGE } from "./pages.js";

/*
 * A namespace's checkpoints sorted by id (string order, as LangGraph's savers
 * sort them: the newest checkpoint is the greatest id, not the last written),
 * in pages (see pages.ts). Searches run on the frozen published value; only
 * the change goes through the document draft (reading a draft's elements
 * copies each one).
 */

type Item = readonly [string, number];
type Pages = readonly (readonly Item[])[];

/** First position in `items` whose id is not below `id`. */
function lowerBound(items: readonly Item[], id: string): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((items[mid] as Item)[0] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The page that holds `id` or where it would go: the first whose last id is not below it (or the last page). */
function pageFor(pages: Pages, id: string): number {
  let lo = 0;
  let hi = pages.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const page = pages[mid] as readonly Item[];
    if ((page[page.length - 1] as Item)[0] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The entry holding checkpoint `id`, if the index has it. */
export function findEntry(pages: Pages, id: string): number | undefined {
  if (pages.length === 0) return undefined;
  const page = pages[pageFor(pages, id)] as readonly Item[];
  const item = page[lowerBound(page, id)];
  return item !== undefined && item[0] === id ? item[1] : undefined;
}

/** The newest checkpoint (greatest id). */
export function latest(pages: Pages): Item | undefined {
  const page = pages[pages.length - 1];
  return page?.[page.length - 1];
}

/** Every checkpoint, newest first. */
export function* newestFirst(pages: Pages): Generator<Item> {
  for (let p = pages.length - 1; p >= 0; p--) {
    const page = pages[p] as readonly Item[];
    for (let i = page.length - 1; i >= 0; i--) yield page[i] as Item;
  }
}

/**
 * Records in the draft `target` that checkpoint `id` is now in `entry`,
 * positioned by searching `sorted` (the same pages, read-only). A checkpoint
 * put again with the same id replaces the earlier one, as LangGraph's savers
 * do. Appending is the common case (ids are time-ordered uuid6); an id that
 * sorts before the newest is spliced into its page, which may then hold more
 * than a page's worth.
 */
export function insertEntry(target: IndexItem[][], sorted: Pages, id: string, entry: number): void {
  const newest = latest(sorted);
  if (newest === undefined || newest[0] < id) {
    const last = target[target.length - 1];
    if (last !== undefined && last.length < PAGE) last.push([id, entry]);
    else target.push([[id, entry]]);
    return;
  }
  const p = pageFor(sorted, id);
  const at = lowerBound(sorted[p] as readonly Item[], id);
  const page = target[p] as IndexItem[];
  if (sorted[p]?.[at]?.[0] === id) page[at] = [id, entry];
  else page.splice(at, 0, [id, entry]);
}
