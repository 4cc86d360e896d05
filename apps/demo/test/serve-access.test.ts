import { mkdtemp, rm } from "node:fs/promises";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  body,
  send,
  sqliteWithRun,
  startInProcess,
  type InProcessViewer,
} from "./support/viewer-fixture.ts";

let dir = "";
let viewer: InProcessViewer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "durably-viewer-access-"));
  const { file } = await sqliteWithRun(dir);
  viewer = await startInProcess({ backend: "sqlite", file });
});

afterAll(async () => {
  await viewer?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The conversations the storage lists now: a refused POST must not have added one. */
async function conversationIds(): Promise<number[]> {
  const list = JSON.parse((await viewer.send("/api/conversations")).body) as {
    conversations: { id: number }[];
  };
  return list.conversations.map((c) => c.id);
}

describe("viewer access: the token", () => {
  it("refuses a request without the token, says how to get in, and writes nothing", async () => {
    viewer.resetCommits();
    const post = await viewer.send("/api/agent/run", {
      method: "POST",
      headers: { cookie: null, origin: viewer.server.origin, "content-type": "application/json" },
      body: "{}",
    });
    expect(post.status).toBe(401);
    expect(viewer.commits()).toEqual([]);
    for (const path of ["/", "/static/app.js", "/api/status", "/api/conversations/1/events"]) {
      const response = await viewer.send(path, { headers: { cookie: null } });
      expect(response.status, path).toBe(401);
      expect(response.body, path).toContain("needs the token from the URL it printed");
      expect(response.body, path).not.toContain(viewer.server.token);
    }
    const wrong = await viewer.send("/api/status", {
      headers: { cookie: `${viewer.server.cookieName}=${"x".repeat(viewer.server.token.length)}` },
    });
    expect(wrong.status).toBe(401);
  });

  it("trades the token in the printed URL for an HttpOnly, SameSite=Strict cookie and drops it from the address", async () => {
    const response = await viewer.send(`/?token=${viewer.server.token}&c=2`, {
      headers: { cookie: null },
    });
    expect(response.status).toBe(303);
    expect(response.headers.location).toBe("/?c=2");
    expect(response.headers["set-cookie"]).toEqual([
      `${viewer.server.cookieName}=${viewer.server.token}; HttpOnly; SameSite=Strict; Path=/`,
    ]);
    const page = await viewer.send("/");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(page.headers["referrer-policy"]).toBe("no-referrer");
  });

  it("names its cookie after the port, since cookies do not tell ports apart", () => {
    expect(viewer.server.cookieName).toBe(`durably_viewer_${viewer.server.port}`);
    expect(viewer.server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}$/);
  });
});

describe("viewer access: where requests come from", () => {
  it("refuses a POST from another origin, or with none, and writes nothing", async () => {
    const before = await conversationIds();
    viewer.resetCommits();
    const logged = viewer.log.length;
    const attempts: [string, Record<string, string | null>][] = [
      ["another port of this host", { origin: "http://127.0.0.1:1" }],
      ["another site", { origin: "http://evil.example" }],
      ["no Origin header", { origin: null }],
      ["the null origin", { origin: "null" }],
    ];
    for (const [what, headers] of attempts) {
      const response = await viewer.send("/api/agent/run", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: "{}",
      });
      expect(response.status, what).toBe(403);
      expect(body(response).error, what).toContain("a POST must come from this viewer's own page");
    }
    const plain = await viewer.send("/api/agent/run", {
      method: "POST",
      headers: { origin: viewer.server.origin, "content-type": "text/plain" },
      body: "{}",
    });
    expect(plain.status).toBe(415);
    expect(body(plain).error).toContain("must be application/json, got text/plain");
    expect(viewer.commits()).toEqual([]);
    expect(await conversationIds()).toEqual(before);
    expect(
      viewer.log.slice(logged).filter((line) => line.startsWith("refused POST /api/agent/run")),
    ).toHaveLength(4);
  });

  it("refuses what a browser marks as sent from another site, except opening the page", async () => {
    const api = await viewer.send("/api/conversations", {
      headers: { "sec-fetch-site": "same-site", "sec-fetch-mode": "cors" },
    });
    expect(api.status).toBe(403);
    const navigation = await viewer.send("/", {
      headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" },
    });
    expect(navigation.status).toBe(200);
    const apiNavigation = await viewer.send("/api/conversations", {
      headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" },
    });
    expect(apiNavigation.status).toBe(403);
  });

  it("refuses a Host header that does not name it (a DNS-rebinding page)", async () => {
    const response = await viewer.send("/api/status", {
      headers: { host: `attacker.example:${viewer.server.port}` },
    });
    expect(response.status).toBe(403);
    expect(body(response).error).toContain("does not name this viewer");
    expect(
      (await viewer.send("/api/status", { headers: { host: `localhost:${viewer.server.port}` } }))
        .status,
    ).toBe(200);
  });

  it("grants no CORS: no Access-Control header on any answer, preflights refused", async () => {
    const preflight = await viewer.send("/api/agent/run", {
      method: "OPTIONS",
      headers: {
        origin: "http://evil.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    expect(preflight.status).toBe(405);
    for (const response of [preflight, await viewer.send("/api/status"), await viewer.send("/")])
      for (const header of Object.keys(response.headers))
        expect(header.startsWith("access-control-")).toBe(false);
  });

  it("listens on loopback only", async () => {
    expect(viewer.server.address).toBe("127.0.0.1");
    expect(viewer.server.origin).toBe(`http://127.0.0.1:${viewer.server.port}`);
    const outside = Object.values(networkInterfaces())
      .flat()
      .find((i) => i !== undefined && i.family === "IPv4" && !i.internal);
    if (outside !== undefined)
      await expect(send(viewer.server.port, "/api/status", {}, outside.address)).rejects.toThrow(
        /ECONNREFUSED/,
      );
  });
});
