/**
 * What one `commit` call moves, keyed by id, batch by batch: the batch
 * being written sees its own moves over the call's, a batch refused (and
 * undone by its savepoint) has its moves dropped, a stored batch's moves
 * become the call's. The call writes what was kept once, at its end.
 */
export class BatchMoves<V> {
  readonly #call = new Map<number, V>();
  readonly #batch = new Map<number, V>();

  /** The newest move of `id` in this call (this batch's first), if any. */
  get(id: number): V | undefined {
    return this.#batch.get(id) ?? this.#call.get(id);
  }

  /** Moves `id` in the batch being written. */
  set(id: number, value: V): void {
    this.#batch.set(id, value);
  }

  /** The batch is stored: its moves become the call's. */
  keepBatch(): void {
    for (const [id, value] of this.#batch) this.#call.set(id, value);
    this.#batch.clear();
  }

  /** The batch was refused and rolled back: its moves are forgotten. */
  dropBatch(): void {
    this.#batch.clear();
  }

  /** Every move of the stored batches, newest per id. */
  kept(): ReadonlyMap<number, V> {
    return this.#call;
  }
}
