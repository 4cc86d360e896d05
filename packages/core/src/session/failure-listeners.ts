import type { SessionFailed } from "../domain/errors.js";
import type { ListenerErrorHandler } from "./watches.js";

/** Called once with the session's failure (`SessionFailed`, the storage error as its cause). */
export type FailureListener = (failure: SessionFailed) => void;

/**
 * Who is told when the session fails: waits that only storage progress
 * could end (a task's terminal commit, a submission's settlement) subscribe
 * here so they reject at once instead of waiting forever. Each listener is
 * called once; one that subscribes after the failure is called on a
 * microtask.
 */
export class FailureListeners {
  private readonly listeners = new Set<FailureListener>();
  private failure: SessionFailed | undefined;

  constructor(private readonly onError: ListenerErrorHandler) {}

  add(listener: FailureListener): () => void {
    const failure = this.failure;
    if (failure) {
      let disposed = false;
      queueMicrotask(() => {
        if (!disposed) this.call(listener, failure);
      });
      return () => {
        disposed = true;
      };
    }
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** The session failed: every listener is called now, in subscription order. */
  notify(failure: SessionFailed): void {
    if (this.failure) return;
    this.failure = failure;
    const listeners = [...this.listeners];
    this.listeners.clear();
    for (const listener of listeners) this.call(listener, failure);
  }

  /** The session closed without failing: nobody will be told anything. */
  clear(): void {
    this.listeners.clear();
  }

  private call(listener: FailureListener, failure: SessionFailed): void {
    try {
      listener(failure);
    } catch (error) {
      this.onError(error, "session failure listener");
    }
  }
}
