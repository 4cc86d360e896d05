type Resolvers = { resolve: () => void; reject: (error: Error) => void };

/** Callers of `waitForIdle`, resolved or rejected together. */
export class IdleWaiters {
  private waiters: Resolvers[] = [];

  /** Resolves at the next `resolveAll`; rejects at `rejectAll` or when `signal` aborts. */
  wait(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(signal?.reason as Error);
      };
      const waiter: Resolvers = {
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        reject: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  resolveAll(): void {
    for (const waiter of this.take()) waiter.resolve();
  }

  rejectAll(error: Error): void {
    for (const waiter of this.take()) waiter.reject(error);
  }

  private take(): Resolvers[] {
    const waiters = this.waiters;
    this.waiters = [];
    return waiters;
  }
}
