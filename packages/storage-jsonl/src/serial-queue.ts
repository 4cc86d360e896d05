/** Runs async jobs one at a time, in submission order. */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** Resolves once every job submitted so far has settled. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
