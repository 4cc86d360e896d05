import { insertId, lowerBound, removeId } from "../sorted-ids.js";

const EMPTY: readonly number[] = Object.freeze([]);

/**
 * Rows by id plus two sorted id indexes: all ids, and ids grouped by a key
 * (the conversation, for most tables) so a scan of one group never walks the
 * others. Replacing a row whose group changed moves it between groups; a
 * group left empty is dropped.
 *
 * A row may also be kept in a backend's stored form, a string (`putStored`),
 * when the table was made with `revive`: the first `get` turns it into the
 * row and keeps that instead. A backend rebuilding a large table on open
 * keeps one string per row that way, not the row's objects. Stored rows
 * given in ascending id order, above every id already in the table (as a
 * backend loads a table it wrote in id order), are kept in two arrays
 * (ids, rows) that a lookup searches, rather than in the map: building a
 * map of many rows costs more than the rest of the load.
 */
export class Table<T extends object> {
  private readonly rows = new Map<number, T | string>();
  /** Ascending ids of rows loaded by `putStored` in order, and those rows (never in `rows`). */
  private readonly loadedIds: number[] = [];
  private readonly loaded: (T | string)[] = [];
  private readonly all: number[] = [];
  private readonly groups = new Map<number, number[]>();

  constructor(
    private readonly groupOf: (row: T) => number | undefined,
    private readonly revive?: (id: number, stored: string) => T,
  ) {}

  get size(): number {
    return this.rows.size + this.loadedIds.length;
  }

  get(id: number): T | undefined {
    const row = this.rows.get(id);
    if (row === undefined) return this.loadedRow(id);
    if (typeof row !== "string") return row;
    const revived = (this.revive as (id: number, stored: string) => T)(id, row);
    this.rows.set(id, revived);
    return revived;
  }

  /** Index of `id` among the loaded rows, or -1. */
  private loadedAt(id: number): number {
    const ids = this.loadedIds;
    if (ids.length === 0) return -1;
    const at = lowerBound(ids, id);
    return ids[at] === id ? at : -1;
  }

  private loadedRow(id: number): T | undefined {
    const at = this.loadedAt(id);
    if (at < 0) return undefined;
    const row = this.loaded[at] as T | string;
    if (typeof row !== "string") return row;
    const revived = (this.revive as (id: number, stored: string) => T)(id, row);
    this.loaded[at] = revived;
    return revived;
  }

  /** The row as kept: the row, or its stored form while it was never read. */
  stored(id: number): T | string | undefined {
    const row = this.rows.get(id);
    if (row !== undefined) return row;
    const at = this.loadedAt(id);
    return at < 0 ? undefined : this.loaded[at];
  }

  has(id: number): boolean {
    return this.rows.has(id) || this.loadedAt(id) >= 0;
  }

  put(id: number, row: T): void {
    this.putRow(id, row, this.groupOf(row));
  }

  /**
   * Keeps a row in its stored form (the table needs `revive`), in `group`
   * (what `groupOf` gives for the row): `revive(id, stored)` must give it
   * back, the same on every call.
   */
  putStored(id: number, stored: string, group: number | undefined): void {
    if (this.revive === undefined) throw new Error("this table keeps no stored rows");
    const last = this.all[this.all.length - 1];
    if (last !== undefined && last >= id) {
      this.putRow(id, stored, group);
      return;
    }
    // Above every id so far: appended to the loaded rows.
    this.all.push(id);
    this.loadedIds.push(id);
    this.loaded.push(stored);
    if (group !== undefined) addToIndex(this.groups, group, id);
  }

  private putRow(id: number, row: T | string, group: number | undefined): void {
    const all = this.all;
    const last = all[all.length - 1];
    // A new highest id (the common case, ids being minted upwards) has no old row to look up.
    const old = last === undefined || last < id ? undefined : this.get(id);
    if (old === undefined) insertId(all, id);
    else {
      const oldGroup = this.groupOf(old);
      if (oldGroup !== undefined && oldGroup !== group) this.removeFromGroup(oldGroup, id);
    }
    const at = old === undefined ? -1 : this.loadedAt(id);
    if (at >= 0) this.loaded[at] = row;
    else this.rows.set(id, row);
    if (group !== undefined) addToIndex(this.groups, group, id);
  }

  /** Every id, ascending. */
  ids(): readonly number[] {
    return this.all;
  }

  /** Ids of one group, ascending. */
  idsOf(group: number): readonly number[] {
    return this.groups.get(group) ?? EMPTY;
  }

  private removeFromGroup(group: number, id: number): void {
    removeFromIndex(this.groups, group, id);
  }
}

/** Adds `id` to the sorted id list under `key`, creating it. */
export function addToIndex<K>(index: Map<K, number[]>, key: K, id: number): void {
  let ids = index.get(key);
  if (ids === undefined) index.set(key, (ids = []));
  insertId(ids, id);
}

/** Removes `id` from the sorted id list under `key`, dropping the list once empty. */
export function removeFromIndex<K>(index: Map<K, number[]>, key: K, id: number): void {
  const ids = index.get(key);
  if (ids === undefined) return;
  removeId(ids, id);
  if (ids.length === 0) index.delete(key);
}
