/** Promises under way, so a caller can wait until none is (new ones may start meanwhile). */
export class InFlight {
  private readonly running = new Set<Promise<unknown>>();

  track<T>(promise: Promise<T>): Promise<T> {
    const settled = promise.then(
      () => undefined,
      () => undefined,
    );
    this.running.add(settled);
    void settled.then(() => this.running.delete(settled));
    return promise;
  }

  /** Resolves once every promise tracked before this call has settled. */
  async idle(): Promise<void> {
    await Promise.all([...this.running]);
  }
}
