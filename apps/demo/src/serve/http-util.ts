import type { IncomingMessage, ServerResponse } from "node:http";
import { SECURITY_HEADERS } from "./security.js";

/** A request the viewer refuses or cannot serve: the status and a message the page shows as is. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The largest POST body read (the viewer's POSTs carry a few small fields). */
const BODY_LIMIT = 4096;

export function sendJson(response: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "content-length": Buffer.byteLength(body),
  });
  response.end(body);
}

export function sendText(
  response: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    "content-type": "text/plain; charset=utf-8",
    "cache-control": "no-store",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

/**
 * Reads a JSON object body. The content type must be application/json: a
 * page on another origin cannot send that without a CORS preflight, which
 * this server never grants.
 */
export async function readJsonBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  const type = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json")
    throw new HttpError(
      415,
      `a POST to the viewer must be application/json, got ${type || "no content type"}`,
    );
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) throw new HttpError(413, `the body is larger than ${BODY_LIMIT} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, "the body is not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new HttpError(400, "the body must be a JSON object");
  return value as Record<string, unknown>;
}
