import type { Json } from "@durably/core";

/*
 * Long lists in documents are kept as pages of at most PAGE items (all pages
 * full but the last). Changing a document copies, freezes and (in storage)
 * re-applies every array on the changed path; with pages that is the last
 * page and the short list of pages, not the whole list, so appending to a
 * list of any length costs the same.
 */
export const PAGE = 256;

export type Pages<T> = T[][];

/** Number of items in `pages` (every page is full but the last). */
export function pagedLength<T>(pages: readonly (readonly T[])[]): number {
  const last = pages[pages.length - 1];
  return last === undefined ? 0 : (pages.length - 1) * PAGE + last.length;
}

/** The items in order (a copy). */
export function flatten<T>(pages: readonly (readonly T[])[]): T[] {
  const out: T[] = [];
  for (const page of pages) for (const item of page) out.push(item);
  return out;
}

/** Item `index` of `pages`, or undefined. */
export function pagedAt<T>(pages: readonly (readonly T[])[], index: number): T | undefined {
  return pages[Math.floor(index / PAGE)]?.[index % PAGE];
}

/** Appends `items` through a draft: fills the last page, then adds pages. One op per page touched. */
export function appendPaged<T extends Json>(pages: T[][], items: readonly T[]): void {
  let from = 0;
  const last = pages[pages.length - 1];
  if (last !== undefined && last.length < PAGE) {
    const room = PAGE - last.length;
    last.push(...items.slice(0, room));
    from = room;
  }
  for (let i = from; i < items.length; i += PAGE) pages.push(items.slice(i, i + PAGE));
}

/** Keeps the first `keep` items, through a draft. */
export function truncatePaged<T extends Json>(pages: T[][], keep: number): void {
  const full = Math.ceil(keep / PAGE);
  if (pages.length > full) pages.splice(full, pages.length - full);
  const last = pages[pages.length - 1];
  const inLast = keep - (pages.length - 1) * PAGE;
  if (last !== undefined && last.length > inLast) last.splice(inLast, last.length - inLast);
}
