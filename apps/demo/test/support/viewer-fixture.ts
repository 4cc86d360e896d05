import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { join } from "node:path";
import { Harness, type CommitEvent, type ConversationId } from "@durably/core";
import { BACKENDS } from "../../src/backends.ts";
import { SQLITE_FILE } from "../../src/detect.ts";
import {
  VIEWER_QUESTION,
  VIEWER_REQUEST_ID,
  viewerHarnessOptions,
} from "../../src/serve/demo-agent.ts";
import { startViewerServer, type ViewerServer } from "../../src/serve/server.ts";
import type { Target } from "../../src/serve/target.ts";
import { ViewerStorage, type StorageStatus } from "../../src/serve/viewer-storage.ts";

export const FAST = { chunkDelayMs: 0, toolStepMs: 0, retryDelayMs: 1 };

/** A storage of `backend` in `dir` holding one finished run of the viewer's scripted agent. */
export async function storageWithRun(
  backend: "sqlite" | "jsonl" | "store",
  dir: string,
): Promise<{ target: Target; conversationId: ConversationId }> {
  const harness = await Harness.open(await BACKENDS[backend].open(dir), {
    ...viewerHarnessOptions(FAST),
  });
  try {
    const conversation = await harness.createConversation();
    const submission = await conversation.submit({
      type: "input",
      content: VIEWER_QUESTION,
      requestId: VIEWER_REQUEST_ID,
    });
    await submission.wait();
    await harness.whenIdle();
    const target: Target =
      backend === "sqlite" ? { backend, file: join(dir, SQLITE_FILE) } : { backend, dir };
    return { target, conversationId: conversation.id };
  } finally {
    await harness.close();
  }
}

/** A SQLite storage in `dir` holding one finished run of the viewer's scripted agent. */
export async function sqliteWithRun(
  dir: string,
): Promise<{ file: string; conversationId: ConversationId }> {
  const { conversationId } = await storageWithRun("sqlite", dir);
  return { file: join(dir, SQLITE_FILE), conversationId };
}

export interface Response {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A JSON answer of the viewer: an error message, a status, or what the route returns. */
export function body<T = { error: string; status: StorageStatus }>(response: Response): T {
  return JSON.parse(response.body) as T;
}

export interface InProcessViewer {
  storage: ViewerStorage;
  server: ViewerServer;
  log: string[];
  /** Commits the viewer's session stored since the last `resetCommits` (counts only while open). */
  commits(): CommitEvent[];
  resetCommits(): void;
  /** A request with the cookie and this server's Host; override any header, or pass `cookie: null`. */
  send(
    path: string,
    options?: { method?: string; headers?: Record<string, string | null>; body?: string },
  ): Promise<Response>;
  /** A POST as the page sends it: JSON, same Origin, with the cookie. */
  post(path: string, body?: unknown): Promise<Response>;
  close(): Promise<void>;
}

export function send(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string | null>; body?: string } = {},
  host = "127.0.0.1",
): Promise<Response> {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(options.headers ?? {}))
    if (value !== null) headers[key] = value;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host, port, path, method: options.method ?? "GET", headers },
      (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/** The viewer in this process (storage + server), as `demo serve` runs it. */
export async function startInProcess(
  target: Target,
  options: { retryMs?: number; pacing?: typeof FAST; notesFile?: string } = {},
): Promise<InProcessViewer> {
  const log: string[] = [];
  const storage = new ViewerStorage(target, {
    pacing: options.pacing ?? FAST,
    ...(options.notesFile !== undefined ? { notesFile: options.notesFile } : {}),
    retryMs: options.retryMs ?? 100,
    log: (line) => log.push(line),
  });
  await storage.open();
  const server = await startViewerServer(storage, { log: (line) => log.push(line) });
  let seen: CommitEvent[] = [];
  let unsubscribe: (() => void) | undefined;
  const follow = (): void => {
    unsubscribe?.();
    unsubscribe = storage.opened?.harness.session.subscribeCommits((event) => seen.push(event));
  };
  follow();
  storage.subscribe((status) => {
    if (status.state === "open") follow();
  });
  const cookie = `${server.cookieName}=${server.token}`;
  const base = { host: `127.0.0.1:${server.port}`, cookie };
  const viewer: InProcessViewer = {
    storage,
    server,
    log,
    commits: () => seen,
    resetCommits: () => void (seen = []),
    send: (path, o = {}) => send(server.port, path, { ...o, headers: { ...base, ...o.headers } }),
    post: (path, body = {}) =>
      send(server.port, path, {
        method: "POST",
        headers: { ...base, origin: server.origin, "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    async close() {
      unsubscribe?.();
      await server.close();
      await storage.close();
    },
  };
  return viewer;
}

export interface SseEvent {
  event: string;
  data: unknown;
  /** Milliseconds since the stream opened. */
  at: number;
}

export interface EventClient {
  status: number;
  events: SseEvent[];
  /** Resolves with the first event (already received or coming) that matches. */
  next(match: (event: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Drops the connection the way a closed tab does. */
  destroy(): void;
}

/** An event-stream client over a raw socket (what EventSource does, minus reconnecting). */
export function openEvents(viewer: InProcessViewer, path: string): Promise<EventClient> {
  const { server } = viewer;
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const events: SseEvent[] = [];
    const waiters: (() => void)[] = [];
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port: server.port,
        path,
        headers: {
          host: `127.0.0.1:${server.port}`,
          cookie: `${server.cookieName}=${server.token}`,
          accept: "text/event-stream",
        },
      },
      (res) => {
        let buffer = "";
        res.setEncoding("utf8").on("data", (chunk: string) => {
          buffer += chunk;
          let end;
          while ((end = buffer.indexOf("\n\n")) !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (event !== undefined && data !== undefined) {
              events.push({ event, data: JSON.parse(data), at: Date.now() - started });
              for (const wake of waiters.splice(0)) wake();
            }
          }
        });
        res.on("error", () => undefined);
        resolve({
          status: res.statusCode ?? 0,
          events,
          next(match, timeoutMs = 10_000) {
            return new Promise((ok, fail) => {
              const timer = setTimeout(
                () =>
                  fail(
                    new Error(
                      `no matching event within ${timeoutMs} ms; got ${events.map((e) => e.event).join(", ")}`,
                    ),
                  ),
                timeoutMs,
              );
              const look = (): void => {
                const found = events.find(match);
                if (found) {
                  clearTimeout(timer);
                  ok(found);
                } else waiters.push(look);
              };
              look();
            });
          },
          destroy: () => req.destroy(),
        });
      },
    );
    req.on("error", (error) => {
      if (!req.destroyed) reject(error);
    });
    req.end();
  });
}

/** Polls `check` until it returns something other than undefined (or fails after `timeoutMs`). */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
