/** A minimal async mutex: `lock(job)` runs `job` once no other job holds it. */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  lock<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
