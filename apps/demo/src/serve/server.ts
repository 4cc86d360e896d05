import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { handleApi, type ApiContext } from "./api-routes.js";
import { DEFAULT_STREAM_PACING, type StreamPacing } from "./conversation-stream.js";
import { HttpError, sendJson, sendText } from "./http-util.js";
import { Access, SECURITY_HEADERS } from "./security.js";
import type { SseStream } from "./sse.js";
import { loadStaticFiles, type StaticFile } from "./static-files.js";
import { StorageFeed } from "./storage-feed.js";
import { describeError, type ViewerStorage } from "./viewer-storage.js";

export const DEFAULT_HOST = "127.0.0.1";

export interface ViewerServerOptions {
  /** Default 127.0.0.1 (loopback only). */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  pacing?: StreamPacing;
  /** One line per refused request or server error (no token in it). */
  log?: (line: string) => void;
}

export interface ViewerServer {
  /** The URL to open, token included. */
  readonly url: string;
  readonly origin: string;
  /** The address the socket is bound to. */
  readonly address: string;
  readonly port: number;
  readonly token: string;
  readonly cookieName: string;
  /** Open event streams (status feeds and conversation streams). */
  readonly streams: ReadonlySet<SseStream>;
  /** Stops listening, ends every stream; the storage is the caller's to close. */
  close(): Promise<void>;
}

const NO_TOKEN =
  "This Durably viewer needs the token from the URL it printed when it started (http://…/?token=…). Open that URL again; a viewer started anew has a new token.";

function isPage(path: string): boolean {
  return path === "/" || path === "/index.html";
}

/**
 * The viewer's HTTP server (node:http): the page and its static files, the
 * JSON and event-stream API, every request checked by `Access` first. A
 * failing request answers with its own error and leaves the server serving.
 */
export async function startViewerServer(
  storage: ViewerStorage,
  options: ViewerServerOptions = {},
): Promise<ViewerServer> {
  const host = options.host ?? DEFAULT_HOST;
  const log = options.log ?? (() => undefined);
  const files = await loadStaticFiles();
  const streams = new Set<SseStream>();
  const onError = (error: unknown, where: string): void =>
    log(`${where}: ${storage.scrub(describeError(error))}`);
  const feed = new StorageFeed(storage, (error) => onError(error, "conversation list"));
  const context: ApiContext = {
    storage,
    feed,
    pacing: options.pacing ?? DEFAULT_STREAM_PACING,
    streams,
    onError,
  };

  const refuse = (
    response: ServerResponse,
    status: number,
    message: string,
    path: string,
    request: IncomingMessage,
  ): void => {
    log(`refused ${request.method ?? "?"} ${path}: ${message}`);
    if (path.startsWith("/api/")) sendJson(response, status, { error: message });
    else sendText(response, status, message);
  };

  const serveStatic = (response: ServerResponse, file: StaticFile): void => {
    response.writeHead(200, {
      ...SECURITY_HEADERS,
      "content-type": file.type,
      "cache-control": "no-store",
      "content-length": file.body.length,
    });
    response.end(file.body);
  };

  async function handle(
    check: Access,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    const url = new URL(request.url ?? "/", "http://viewer.invalid");
    const path = url.pathname;
    if (!check.hostAllowed(request))
      return refuse(
        response,
        403,
        `the Host header ${JSON.stringify(request.headers.host ?? "")} does not name this viewer`,
        path,
        request,
      );
    if (check.crossSiteRefused(request, isPage(path)))
      return refuse(
        response,
        403,
        `a request from another site (${String(request.headers["sec-fetch-site"])}) may only open the page`,
        path,
        request,
      );
    const token = check.hasToken(request, url);
    if (!token.ok) return refuse(response, 401, NO_TOKEN, path, request);
    if (request.method === "POST" && !check.originAllowed(request))
      return refuse(
        response,
        403,
        `a POST must come from this viewer's own page; Origin ${JSON.stringify(request.headers.origin ?? "(none)")} is not ${check.origin(host)}`,
        path,
        request,
      );
    if (isPage(path) && request.method === "GET" && token.fromUrl) {
      // Trade the token in the URL for the cookie, and take it out of the address bar.
      url.searchParams.delete("token");
      response.writeHead(303, {
        ...SECURITY_HEADERS,
        "set-cookie": check.setCookie(),
        location: `/${url.search}`,
        "cache-control": "no-store",
      });
      response.end();
      return;
    }
    if (path.startsWith("/api/")) return handleApi(context, request, response, path);
    if (path === "/favicon.ico") {
      response.writeHead(204, { ...SECURITY_HEADERS, "cache-control": "no-store" });
      response.end();
      return;
    }
    const name = isPage(path)
      ? "index.html"
      : path.startsWith("/static/")
        ? path.slice(8)
        : undefined;
    const file = name === undefined ? undefined : files.get(name);
    if (file === undefined) throw new HttpError(404, `${path} is not part of the viewer`);
    if (request.method !== "GET" && request.method !== "HEAD")
      throw new HttpError(405, `${request.method ?? "?"} is not allowed on ${path}`);
    serveStatic(response, file);
  }

  const server = createServer();
  server.on("clientError", (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port, address } = server.address() as AddressInfo;
  // The token and the allowed origins name the port, known only now: requests are taken from here on.
  const access = new Access(port, host);
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    handle(access, request, response).catch((error: unknown) => {
      const path = (request.url ?? "/").split("?")[0] ?? "/";
      const status = error instanceof HttpError ? error.status : 500;
      const message =
        error instanceof HttpError ? error.message : storage.scrub(describeError(error));
      if (status === 500) log(`error on ${request.method ?? "?"} ${path}: ${message}`);
      if (response.headersSent) {
        response.destroy();
        return;
      }
      if (path.startsWith("/api/")) sendJson(response, status, { error: message });
      else sendText(response, status, message);
    });
  });
  const origin = access.origin(host);
  return {
    url: `${origin}/?token=${access.token}`,
    origin,
    address,
    port,
    token: access.token,
    cookieName: access.cookieName,
    streams,
    async close() {
      feed.close();
      for (const stream of [...streams]) stream.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
