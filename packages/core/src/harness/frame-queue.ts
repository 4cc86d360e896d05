/**
 * Delivers frames to one listener in order, waiting for a listener that
 * returns a promise. A slow listener never holds more than `limit` frames:
 * past that, everything queued collapses into ONE frame built when it is
 * delivered (`collapse()`: the full current view), so memory stays bounded
 * and the listener still ends up with the current state.
 */
export class FrameQueue<F> {
  private queue: F[] = [];
  private collapsed = false;
  private delivering = false;
  private closed = false;

  constructor(
    private readonly deliver: (frame: F) => void | Promise<void>,
    private readonly collapse: () => F,
    private readonly onError: (error: unknown) => void,
    readonly limit = 100,
  ) {
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new TypeError(`FrameQueue: limit must be a positive integer, got ${limit}`);
  }

  /** Frames waiting (a collapsed run counts as one). */
  get pending(): number {
    return this.collapsed ? 1 : this.queue.length;
  }

  push(frame: F): void {
    if (this.closed || this.collapsed) return; // a collapsed frame is built at delivery and covers this one
    if (this.queue.length >= this.limit) {
      this.queue = [];
      this.collapsed = true;
    } else this.queue.push(frame);
    if (!this.delivering) void this.run();
  }

  close(): void {
    this.closed = true;
    this.queue = [];
    this.collapsed = false;
  }

  private async run(): Promise<void> {
    this.delivering = true;
    try {
      while (!this.closed && (this.collapsed || this.queue.length > 0)) {
        let frame: F;
        if (this.collapsed) {
          this.collapsed = false;
          frame = this.collapse();
        } else frame = this.queue.shift() as F;
        try {
          const done = this.deliver(frame);
          if (done !== undefined && typeof done.then === "function") await done;
        } catch (error) {
          this.onError(error);
        }
      }
    } finally {
      this.delivering = false;
    }
  }
}
