import { closeSync, openSync, readSync, writeSync } from "node:fs";
import Database from "better-sqlite3";

/**
 * The leaf pages of a table's or index's b-tree in key order, from SQLite's
 * own `dbstat` view of the closed file, and the page size.
 */
export function leafPages(path: string, name: string): { leaves: number[]; pageSize: number } {
  const db = new Database(path, { readonly: true });
  try {
    const leaves = (
      db
        .prepare("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path")
        .all(name) as { pageno: number }[]
    ).map((r) => r.pageno);
    return { leaves, pageSize: db.pragma("page_size", { simple: true }) as number };
  } finally {
    db.close();
  }
}

/** Every b-tree of the file (tables and indexes) with its leaf pages that hold cells, in key order. */
export function allLeaves(path: string): { name: string; leaves: number[] }[] {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db
      .prepare(
        "SELECT name, pageno FROM dbstat WHERE pagetype = 'leaf' AND ncell > 0 ORDER BY name, path",
      )
      .all() as { name: string; pageno: number }[];
    const trees = new Map<string, number[]>();
    for (const { name, pageno } of rows) trees.set(name, [...(trees.get(name) ?? []), pageno]);
    return [...trees].map(([name, leaves]) => ({ name, leaves }));
  } finally {
    db.close();
  }
}

/**
 * Lowers the cell count in a b-tree page's header by `by`: two bytes of the
 * real file, of which only the low one changes for small counts. SQLite then
 * no longer sees the page's last cells, so their rows vanish from the middle
 * of the table or index while the pages around stay valid.
 */
export function lowerCellCount(
  path: string,
  page: number,
  pageSize: number,
  by: number,
): { before: number; after: number } {
  // Page 1 starts with the 100-byte file header; the cell count is at offset 3 of the page header.
  const at = (page - 1) * pageSize + (page === 1 ? 100 : 0) + 3;
  const fd = openSync(path, "r+");
  try {
    const bytes = Buffer.alloc(2);
    readSync(fd, bytes, 0, 2, at);
    const before = bytes.readUInt16BE(0);
    const after = Math.max(0, before - by);
    bytes.writeUInt16BE(after, 0);
    writeSync(fd, bytes, 0, 2, at);
    return { before, after };
  } finally {
    closeSync(fd);
  }
}

/** Flips one bit of the real file. */
export function flipBit(path: string, offset: number, bit: number): void {
  const fd = openSync(path, "r+");
  try {
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, offset);
    byte[0] = (byte[0] as number) ^ (1 << bit);
    writeSync(fd, byte, 0, 1, offset);
  } finally {
    closeSync(fd);
  }
}
