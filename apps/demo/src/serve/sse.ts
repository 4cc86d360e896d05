import type { IncomingMessage, ServerResponse } from "node:http";

/** A comment line every so often, so a client that vanished without closing is noticed. */
const HEARTBEAT_MS = 15_000;
/** How long the browser waits before reconnecting a dropped stream. */
const RETRY_MS = 1500;

/**
 * One server-sent-events response. `send` writes an event (`data` as one
 * line of JSON); `drained` resolves when the socket took everything, so a
 * slow client holds its sender back instead of growing a buffer; `closed`
 * resolves when the client went away (or `close` was called), and every
 * `onClose` callback has run by then.
 */
export class SseStream {
  #closed = false;
  readonly #closers: (() => void)[] = [];
  readonly #heartbeat: ReturnType<typeof setInterval>;
  readonly closed: Promise<void>;

  constructor(
    request: IncomingMessage,
    private readonly response: ServerResponse,
    headers: Record<string, string>,
  ) {
    response.writeHead(200, {
      ...headers,
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
    });
    response.write(`retry: ${RETRY_MS}\n\n`);
    this.#heartbeat = setInterval(() => this.#write(": keep-alive\n\n"), HEARTBEAT_MS);
    this.#heartbeat.unref();
    let resolveClosed!: () => void;
    this.closed = new Promise((resolve) => (resolveClosed = resolve));
    const end = (): void => {
      if (this.#closed) return;
      this.#closed = true;
      clearInterval(this.#heartbeat);
      for (const closer of this.#closers.splice(0)) {
        try {
          closer();
        } catch {
          // one closer failing must not keep the others from running
        }
      }
      resolveClosed();
    };
    request.once("close", end);
    response.once("close", end);
    response.once("error", end);
    this.#end = end;
  }

  readonly #end: () => void;

  get isClosed(): boolean {
    return this.#closed;
  }

  onClose(closer: () => void): void {
    if (this.#closed) closer();
    else this.#closers.push(closer);
  }

  #write(text: string): boolean {
    if (this.#closed || this.response.writableEnded) return false;
    return this.response.write(text);
  }

  /** Writes one event; false when the socket's buffer is full (wait for `drained`). */
  send(event: string, data: unknown): boolean {
    return this.#write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  drained(): Promise<void> {
    if (this.#closed || !this.response.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.response.off("drain", done);
        resolve();
      };
      this.response.once("drain", done);
      this.onClose(done);
    });
  }

  close(): void {
    if (!this.#closed && !this.response.writableEnded) this.response.end();
    this.#end();
  }
}
