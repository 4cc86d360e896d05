import { insertId, removeId } from "@durably/core";

const EMPTY: readonly number[] = Object.freeze([]);

/**
 * Rows by id plus two sorted id indexes: all ids, and ids grouped by a key
 * (the conversation, for most tables) so a scan of one group never walks the
 * others. Replacing a row whose group changed moves it between groups.
 */
export class Table<T> {
  private readonly rows = new Map<number, T>();
  private readonly all: number[] = [];
  private readonly groups = new Map<number, number[]>();

  constructor(private readonly groupOf: (row: T) => number | undefined) {}

  get(id: number): T | undefined {
    return this.rows.get(id);
  }

  has(id: number): boolean {
    return this.rows.has(id);
  }

  put(id: number, row: T): void {
    const old = this.rows.get(id);
    const group = this.groupOf(row);
    if (old !== undefined) {
      const oldGroup = this.groupOf(old);
      if (oldGroup !== group && oldGroup !== undefined) this.removeFromGroup(oldGroup, id);
    } else {
      insertId(this.all, id);
    }
    this.rows.set(id, row);
    if (group !== undefined) {
      let ids = this.groups.get(group);
      if (ids === undefined) this.groups.set(group, (ids = []));
      insertId(ids, id);
    }
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
    const ids = this.groups.get(group);
    if (ids === undefined) return;
    removeId(ids, id);
    if (ids.length === 0) this.groups.delete(group);
  }
}
