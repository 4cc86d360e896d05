import type { Session } from "../session/session.js";
import type { Transaction } from "../session/transaction.js";

/**
 * Streams small changes (text deltas, tool output) into deferred commits
 * (shown at once, stored later) without one commit per change: while one deferred commit is
 * on the line, later items gather and go together in the next one. Watchers
 * therefore see every item promptly and in order, storage sees them within
 * the session's progress window, and a burst of 10,000 chunks costs a few
 * hundred commit callbacks, not 10,000.
 */
export class ProgressWriter<T> {
  private buffer: T[] = [];
  private waiters: (() => void)[] = [];
  private inFlight: Promise<void> | undefined;
  private failure: { error: Error } | undefined;

  constructor(
    private readonly session: Session,
    private readonly write: (tx: Transaction, items: readonly T[]) => Promise<void>,
  ) {}

  /** Queues an item; resolves once watchers have seen it (rejects if its commit failed). */
  push(item: T): Promise<void> {
    if (this.failure) return Promise.reject(this.failure.error);
    this.buffer.push(item);
    const seen = new Promise<void>((resolve, reject) =>
      this.waiters.push(() => (this.failure ? reject(this.failure.error) : resolve())),
    );
    this.pump();
    return seen;
  }

  private pump(): void {
    if (this.inFlight || this.buffer.length === 0) return;
    const items = this.buffer;
    const waiters = this.waiters;
    this.buffer = [];
    this.waiters = [];
    this.inFlight = this.session
      .commit((tx) => this.write(tx, items), { durability: "deferred" })
      .then(
        () => undefined,
        (error: unknown) => {
          this.failure ??= {
            error: error instanceof Error ? error : new Error(String(error), { cause: error }),
          };
        },
      )
      .finally(() => {
        this.inFlight = undefined;
        for (const wake of waiters) wake();
        if (this.failure) {
          const stranded = this.waiters;
          this.waiters = [];
          this.buffer = [];
          for (const wake of stranded) wake();
        } else this.pump();
      });
  }

  /**
   * Resolves once every pushed item is on the line (published), so an
   * ordinary commit issued next is ordered after them. Rejects with the
   * first commit failure.
   */
  async settle(): Promise<void> {
    while (this.inFlight) await this.inFlight;
    if (this.failure) throw this.failure.error;
  }
}
