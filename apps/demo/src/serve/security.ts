import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * The viewer's access rules. The server binds loopback; the URL it prints
 * carries a random token, which the first page load trades for a cookie
 * (HttpOnly, SameSite=Strict, named after the port: cookies do not tell
 * ports apart). Every request must carry the token. The Host header must
 * name this server (a DNS-rebinding page cannot borrow it), requests a
 * browser marks as coming from another site are refused unless they are a
 * plain page navigation, and a POST must come from this very origin (other
 * local ports are the same *site*, so SameSite alone would let their pages
 * post with the cookie). No CORS header is ever sent.
 */
export class Access {
  readonly token: string;
  readonly cookieName: string;
  readonly #allowedHosts: Set<string>;
  readonly #allowedOrigins: Set<string>;

  constructor(
    readonly port: number,
    boundHost: string,
    token: string = randomBytes(32).toString("base64url"),
  ) {
    this.token = token;
    this.cookieName = `durably_viewer_${port}`;
    const names = new Set(["127.0.0.1", "localhost", "[::1]"]);
    names.add(boundHost.includes(":") ? `[${boundHost}]` : boundHost);
    this.#allowedHosts = new Set([...names].map((name) => `${name}:${port}`));
    this.#allowedOrigins = new Set([...this.#allowedHosts].map((host) => `http://${host}`));
  }

  /** The origin the printed URL uses. */
  origin(host: string): string {
    return `http://${host.includes(":") ? `[${host}]` : host}:${this.port}`;
  }

  #matches(candidate: string | undefined): boolean {
    if (candidate === undefined) return false;
    const a = Buffer.from(candidate);
    const b = Buffer.from(this.token);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  cookieToken(request: IncomingMessage): string | undefined {
    for (const part of (request.headers.cookie ?? "").split(";")) {
      const eq = part.indexOf("=");
      if (eq !== -1 && part.slice(0, eq).trim() === this.cookieName)
        return part.slice(eq + 1).trim();
    }
    return undefined;
  }

  /** The token came with the request: in its cookie, or in the URL (the printed link). */
  hasToken(request: IncomingMessage, url: URL): { ok: boolean; fromUrl: boolean } {
    if (this.#matches(this.cookieToken(request))) return { ok: true, fromUrl: false };
    const fromUrl = this.#matches(url.searchParams.get("token") ?? undefined);
    return { ok: fromUrl, fromUrl };
  }

  setCookie(): string {
    return `${this.cookieName}=${this.token}; HttpOnly; SameSite=Strict; Path=/`;
  }

  hostAllowed(request: IncomingMessage): boolean {
    const host = request.headers.host;
    return host !== undefined && this.#allowedHosts.has(host.toLowerCase());
  }

  /**
   * Fetch metadata: a browser says where a request comes from. Another site
   * (or another port of this one) may navigate to the page, nothing else.
   * Clients that send no such header (curl, old browsers) are judged by the
   * token and, for POSTs, the Origin check alone.
   */
  crossSiteRefused(request: IncomingMessage, page: boolean): boolean {
    const site = request.headers["sec-fetch-site"];
    if (site === undefined || site === "same-origin" || site === "none") return false;
    const navigation = request.method === "GET" && request.headers["sec-fetch-mode"] === "navigate";
    return !(navigation && page);
  }

  /** A state-changing request must name this server as its Origin. */
  originAllowed(request: IncomingMessage): boolean {
    const origin = request.headers.origin;
    return origin !== undefined && this.#allowedOrigins.has(origin.toLowerCase());
  }
}

/** Headers on every response: no framing, no sniffing, no referrer (the URL may hold the token). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-resource-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
};
