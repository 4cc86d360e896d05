import { insertId, removeId } from "@durably/core";

const EMPTY: readonly number[] = Object.freeze([]);

/**
 * Rows by id plus two sorted id indexes: all ids, and ids grouped by a key
 * (the conversation) so a scan of one group never walks the others.
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
      if (oldGroup !== undefined && oldGroup !== group) {
        const ids = this.groups.get(oldGroup);
        if (ids !== undefined) removeId(ids, id);
      }
    }
    this.rows.set(id, row);
    if (group !== undefined) {
      let ids = this.groups.get(group);
      if (ids === undefined) this.groups.set(group, (ids = []));
      insertId(ids, id);
    }
  }

  ids(): readonly number[] {
    return this.all;
  }

  idsOf(group: number): readonly number[] {
    return this.groups.get(group) ?? EMPTY;
  }
}
