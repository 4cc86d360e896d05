import { describe, expect, it } from "vitest";
import type { ConversationId, EntryId, EntryRecord } from "../../src/index.js";
import {
  MemoryIndex,
  Table,
  type StoredEntry,
  type StoredRevision,
} from "../../src/storage/index.js";

/*
 * Rows kept in a backend's stored form (a string) until their first read:
 * `Table.putStored` and `MemoryIndex.putStoredEntry`, against real tables.
 */

interface Row {
  id: number;
  group: number;
  text: string;
}

/** A table whose stored form is the row's JSON, counting revivals. */
function jsonTable() {
  const revived: number[] = [];
  const table = new Table<Row>(
    (row) => row.group,
    (id, stored) => {
      revived.push(id);
      return JSON.parse(stored) as Row;
    },
  );
  const store = (row: Row) => table.putStored(row.id, JSON.stringify(row), row.group);
  return { table, revived, store };
}

const row = (id: number, group: number, text = `row ${id}`): Row => ({ id, group, text });

describe("Table: stored rows", () => {
  it("a stored row is revived on its first read only, and kept revived", () => {
    const { table, revived, store } = jsonTable();
    for (const id of [3, 5, 8]) store(row(id, 1));
    expect(table.stored(5)).toBe(JSON.stringify(row(5, 1)));
    expect(revived).toEqual([]);
    const first = table.get(5);
    expect(first).toEqual(row(5, 1));
    expect(table.get(5)).toBe(first);
    expect(table.stored(5)).toBe(first);
    expect(revived).toEqual([5]);
    // The others are still strings.
    expect(typeof table.stored(3)).toBe("string");
    expect(typeof table.stored(8)).toBe("string");
  });

  it("ids, groups, has and size count stored rows as rows, in order and in groups, without reviving", () => {
    const { table, revived, store } = jsonTable();
    store(row(2, 1));
    store(row(4, 2));
    table.put(6, row(6, 1));
    store(row(7, 2));
    // Below the highest id: stored out of order.
    store(row(3, 2));
    expect(table.ids()).toEqual([2, 3, 4, 6, 7]);
    expect(table.idsOf(1)).toEqual([2, 6]);
    expect(table.idsOf(2)).toEqual([3, 4, 7]);
    expect(table.size).toBe(5);
    for (const id of [2, 3, 4, 6, 7]) expect(table.has(id)).toBe(true);
    for (const id of [1, 5, 8]) {
      expect(table.has(id)).toBe(false);
      expect(table.get(id)).toBeUndefined();
      expect(table.stored(id)).toBeUndefined();
    }
    expect(revived).toEqual([]);
    expect([2, 3, 4, 6, 7].map((id) => table.get(id))).toEqual([
      row(2, 1),
      row(3, 2),
      row(4, 2),
      row(6, 1),
      row(7, 2),
    ]);
    expect(revived.sort()).toEqual([2, 3, 4, 7]);
  });

  it("replacing a stored row (read or not) keeps its id once and moves it between groups", () => {
    const { table, store } = jsonTable();
    for (let id = 1; id <= 4; id++) store(row(id, 1));
    table.put(2, row(2, 9, "replaced unread"));
    table.get(3);
    table.put(3, row(3, 9, "replaced after a read"));
    store(row(4, 9, "stored again"));
    expect(table.ids()).toEqual([1, 2, 3, 4]);
    expect(table.idsOf(1)).toEqual([1]);
    expect(table.idsOf(9)).toEqual([2, 3, 4]);
    expect(table.size).toBe(4);
    expect(table.get(2)).toEqual(row(2, 9, "replaced unread"));
    expect(table.get(3)).toEqual(row(3, 9, "replaced after a read"));
    expect(table.get(4)).toEqual(row(4, 9, "stored again"));
  });

  it("a table made without revive keeps no stored rows", () => {
    const table = new Table<Row>((r) => r.group);
    expect(() => table.putStored(1, "{}", 1)).toThrow(/keeps no stored rows/);
    expect(table.ids()).toEqual([]);
  });
});

/** An index whose stored entries are the JSON of their `StoredEntry`. */
class JsonIndex extends MemoryIndex<StoredRevision> {
  revived = 0;
  protected override reviveEntry(_id: number, stored: string): StoredEntry {
    this.revived++;
    return JSON.parse(stored) as StoredEntry;
  }
}

const entry = (id: number, conversationId: number, head?: number): EntryRecord => ({
  id: id as EntryId,
  conversationId: conversationId as ConversationId,
  kind: "note",
  data: `entry ${id}`,
  ...(head === undefined ? {} : { head: head as EntryId }),
});

describe("MemoryIndex.putStoredEntry", () => {
  it("indexes a stored entry as putEntry does (conversation, head) and revives it on read", () => {
    const stored = new JsonIndex();
    const plain = new MemoryIndex<StoredRevision>();
    const entries = [entry(10, 1), entry(11, 2), entry(12, 1, 10), entry(13, 2), entry(14, 1, 12)];
    entries.forEach((e, i) => {
      const row: StoredEntry = { entry: e, commitSeq: i + 1 };
      stored.putStoredEntry(e.id, e.conversationId, e.head !== undefined, JSON.stringify(row));
      plain.putEntry(e, i + 1);
    });
    expect(stored.revived).toBe(0);
    expect(stored.heads).toEqual(plain.heads);
    expect(stored.entries.ids()).toEqual(plain.entries.ids());
    for (const c of [1, 2]) expect(stored.entries.idsOf(c)).toEqual(plain.entries.idsOf(c));
    for (const e of entries) expect(stored.entries.get(e.id)).toEqual(plain.entries.get(e.id));
    expect(stored.revived).toBe(entries.length);
  });

  it("the base index revives none: a stored entry it was given fails its read", () => {
    const index = new MemoryIndex<StoredRevision>();
    index.putStoredEntry(10, 1, false, "{}");
    expect(index.entries.has(10)).toBe(true);
    expect(() => index.entries.get(10)).toThrow(/revives none/);
  });
});
