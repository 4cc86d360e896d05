import { insertId, removeId } from "../sorted-ids.js";

const EMPTY: readonly number[] = Object.freeze([]);

/**
 * Rows by id plus two sorted id indexes: all ids, and ids grouped by a key
 * (the conversation, for most tables) so a scan of one group never walks the
 * others. Replacing a row whose group changed moves it between groups; a
 * group left empty is dropped.
 */
export class Table<T> {
  private readonly rows = new Map<number, T>();
  private readonly all: number[] = [];
  private readonly groups = new Map<number, number[]>();

  constructor(private readonly groupOf: (row: T) => number | undefined) {}

  get size(): number {
    return this.rows.size;
  }

  get(id: number): T | undefined {
    return this.rows.get(id);
  }

  has(id: number): boolean {
    return this.rows.has(id);
  }

  put(id: number, row: T): void {
    const old = this.rows.get(id);
    const group = this.groupOf(row);
    if (old === undefined) insertId(this.all, id);
    else {
      const oldGroup = this.groupOf(old);
      if (oldGroup !== undefined && oldGroup !== group) this.removeFromGroup(oldGroup, id);
    }
    this.rows.set(id, row);
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
