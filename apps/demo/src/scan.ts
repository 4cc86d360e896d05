import type { Cursor, Page } from "@durably/core";

const PAGE_SIZE = 100;

/** Follows a scan's cursors to the end: every item exactly once, in the scan's order. */
export async function scanAll<T>(
  scan: (limit: number, cursor: Cursor | undefined) => Promise<Page<T>>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: Cursor | undefined;
  do {
    const page = await scan(PAGE_SIZE, cursor);
    items.push(...page.items);
    cursor = page.next;
  } while (cursor !== undefined);
  return items;
}
