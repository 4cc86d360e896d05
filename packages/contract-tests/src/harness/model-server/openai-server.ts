import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import {
  COMPACTION_INSTRUCTIONS,
  SCRIPTED_SUMMARY,
  ScriptedModel,
  type ScriptedTurn,
} from "@durably/core";
import { turnReply, type CompletionRequest, type Reply } from "./completions.js";

/** Request headers a client sets to pick its script and pace (see `scriptHeaders`). */
export const SCRIPT_HEADER = "x-durably-script";
export const SCRIPT_ID_HEADER = "x-durably-script-id";
export const CHUNK_DELAY_HEADER = "x-durably-chunk-delay-ms";
export const CHUNK_SIZE_HEADER = "x-durably-chunk-size";
/** The summary a compaction request of this script is answered with (base64 of UTF-8 text). */
export const SUMMARY_HEADER = "x-durably-summary";

export interface ReceivedRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: CompletionRequest;
  /** The turn the server picked (assistant messages in the body), -1 for a raw handler's and a compaction's. */
  readonly turn: number;
  /** A compaction request (its system message is core's `COMPACTION_INSTRUCTIONS`): answered with the script's summary. */
  readonly compaction?: true;
}

export interface OpenAiTestServerOptions {
  /** The script when a request names none (`x-durably-script`). */
  turns?: readonly ScriptedTurn[];
  /** Pause between streamed chunks (default 0). A request's `x-durably-chunk-delay-ms` wins. */
  chunkDelayMs?: number;
  /** Code points per text chunk (default 4). A request's `x-durably-chunk-size` wins. */
  chunkSize?: number;
  /**
   * Answers a request itself (raw SSE, odd headers) when it returns true;
   * `index` counts the requests the server got, from 0.
   */
  handle?: (
    request: { body: CompletionRequest; headers: IncomingHttpHeaders; index: number },
    response: ServerResponse,
  ) => boolean | Promise<boolean>;
}

/** A local OpenAI-compatible chat-completions server that streams scripted turns as real SSE. */
export interface OpenAiTestServer {
  /** The base URL to give a provider, e.g. `http://127.0.0.1:41234/v1`. */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: readonly ReceivedRequest[];
  /** Stops listening and drops open connections (idempotent). */
  close(): Promise<void>;
}

/**
 * Headers that make the server answer from `turns` (failures counted per
 * `id`), at a pace, and compaction requests with `summary` (scripted
 * summary failures are `ScriptedModel`'s only).
 */
export function scriptHeaders(
  id: string,
  turns: readonly ScriptedTurn[],
  pace: { chunkDelayMs?: number; chunkSize?: number; summary?: string } = {},
): Record<string, string> {
  return {
    [SCRIPT_HEADER]: Buffer.from(JSON.stringify(turns)).toString("base64"),
    [SCRIPT_ID_HEADER]: id,
    ...(pace.chunkDelayMs !== undefined ? { [CHUNK_DELAY_HEADER]: String(pace.chunkDelayMs) } : {}),
    ...(pace.chunkSize !== undefined ? { [CHUNK_SIZE_HEADER]: String(pace.chunkSize) } : {}),
    ...(pace.summary !== undefined
      ? { [SUMMARY_HEADER]: Buffer.from(pace.summary).toString("base64") }
      : {}),
  };
}

/** Whether a request is the harness asking for a summary (its system message is the compaction instructions). */
function isCompaction(body: CompletionRequest): boolean {
  const first = body.messages?.[0];
  return first?.role === "system" && first.content === COMPACTION_INSTRUCTIONS;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function send(reply: Reply, response: ServerResponse, delayMs: number): Promise<void> {
  if (reply.type === "cut-before-response") {
    response.socket?.destroy();
    return;
  }
  if (reply.type === "status") {
    response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
    response.end(JSON.stringify(reply.body));
    return;
  }
  response.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  for (const payload of reply.chunks) {
    if (response.destroyed) return; // the client went away (an abort)
    response.write(`data: ${JSON.stringify(payload)}\n\n`);
    if (delayMs > 0) await sleep(delayMs);
  }
  if (reply.end === "cut") {
    // Let the written chunks leave, then drop the connection mid-stream.
    await new Promise<void>((resolve) => response.write("", () => resolve()));
    response.socket?.destroy();
    return;
  }
  if (reply.end === "error") response.write(`data: ${JSON.stringify(reply.error)}\n\n`);
  else response.write("data: [DONE]\n\n");
  response.end();
}

/**
 * Starts the server on 127.0.0.1 (a free port). `POST …/chat/completions`
 * picks the turn the way `ScriptedModel` does (the number of assistant
 * messages in the request), fails it with the turn's next `failures` entry
 * (counted per script id across every process that calls the server), and
 * streams it.
 */
export async function startOpenAiTestServer(
  options: OpenAiTestServerOptions = {},
): Promise<OpenAiTestServer> {
  const requests: ReceivedRequest[] = [];
  const failed = new Map<string, number>();
  let index = 0;
  const server = createServer((request, response) => {
    void (async () => {
      const text = await readBody(request);
      let body: CompletionRequest;
      try {
        body = JSON.parse(text) as CompletionRequest;
      } catch {
        response.writeHead(400, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: "the body is not JSON" } }));
        return;
      }
      const headers = request.headers;
      const path = request.url ?? "";
      const own = index++;
      if (options.handle && (await options.handle({ body, headers, index: own }, response))) {
        requests.push({ path, headers, body, turn: -1 });
        return;
      }
      if (request.method !== "POST" || !path.endsWith("/chat/completions")) {
        response.writeHead(404, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: `no route ${request.method} ${path}` } }));
        return;
      }
      const encoded = header(headers, SCRIPT_HEADER);
      // Checked like ScriptedModel checks it, so a bad script fails loudly here too.
      const turns = encoded
        ? (JSON.parse(Buffer.from(encoded, "base64").toString("utf8")) as ScriptedTurn[])
        : (options.turns ?? []);
      new ScriptedModel(turns);
      const chunkSize = Number(header(headers, CHUNK_SIZE_HEADER) ?? options.chunkSize ?? 4);
      const delayMs = Number(header(headers, CHUNK_DELAY_HEADER) ?? options.chunkDelayMs ?? 0);
      if (isCompaction(body)) {
        requests.push({ path, headers, body, turn: -1, compaction: true });
        const encodedSummary = header(headers, SUMMARY_HEADER);
        const summary = encodedSummary
          ? Buffer.from(encodedSummary, "base64").toString("utf8")
          : SCRIPTED_SUMMARY;
        await send(turnReply({ text: summary }, -1, body, chunkSize, undefined), response, delayMs);
        return;
      }
      const turn = (body.messages ?? []).filter((m) => m.role === "assistant").length;
      requests.push({ path, headers, body, turn });
      const scripted = turns[turn];
      if (!scripted) {
        response.writeHead(400, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            error: {
              message: `scripted server: the script has ${turns.length} turn(s); the request holds ${turn} assistant message(s)`,
              code: "SCRIPT_EXHAUSTED",
            },
          }),
        );
        return;
      }
      const key = `${header(headers, SCRIPT_ID_HEADER) ?? "default"}:${turn}`;
      const failedSoFar = failed.get(key) ?? 0;
      const failure = scripted.failures?.[failedSoFar];
      if (failure) failed.set(key, failedSoFar + 1);
      await send(turnReply(scripted, turn, body, chunkSize, failure), response, delayMs);
    })().catch((error: unknown) => {
      if (!response.headersSent) {
        response.writeHead(500, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: `scripted server: ${String(error)}` } }));
      } else response.socket?.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      (closing ??= new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      })),
  };
}
