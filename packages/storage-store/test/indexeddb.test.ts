import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import "fake-indexeddb/auto";
import { BrowserLevel } from "browser-level";
import { build } from "esbuild";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConversationId, DocumentId } from "@durably/core";
import { systemTool } from "../../../scripts/system-tools.mjs";
import { StoreStorage, levelStore } from "../src/index.js";

describe("levelStore(new BrowserLevel(name)) > IndexedDB in Node (fake-indexeddb)", () => {
  it("stores a commit and reads it back after close and reopen", async () => {
    const name = `durably-${Math.random().toString(36).slice(2)}`;
    const first = await StoreStorage.open(levelStore(new BrowserLevel(name)));
    expect(first.capabilities.persistent).toBe(true);
    await first.commit(
      [
        [
          { type: "conversation", value: { id: 1 as ConversationId } },
          { type: "entry", value: { id: 2, conversationId: 1, kind: "note", data: "hi" } } as never,
          {
            type: "document.create",
            record: { id: 3, kind: "app.notes", scope: { kind: "session" } },
            content: { kind: "base", version: 1, value: { n: 1 } },
          } as never,
        ],
        [
          {
            type: "document.change",
            id: 3 as DocumentId,
            content: { kind: "delta", version: 1, ops: [["s", ["n"], 2]] },
          },
        ],
      ],
      () => undefined,
    );
    await first.close();
    const second = await StoreStorage.open(levelStore(new BrowserLevel(name)));
    expect(
      (await second.scanEntries({ conversationId: 1 as ConversationId }, 5)).items.map(
        (e) => e.data,
      ),
    ).toEqual(["hi"]);
    expect(await second.document(3 as DocumentId, "current")).toMatchObject({
      value: { n: 2 },
      deltasSinceBase: 1,
    });
    expect(await second.mintId()).toBe(4);
    await second.close();
  });
});

// `npm test` installs Chromium where it can; where it cannot, this suite is
// skipped with the reason, and named in the summary npm test prints last.
const installed = systemTool("chromium");
const CHROMIUM = installed.available ? installed.path : undefined;
const describeIf = installed.available ? describe : describe.skip;
if (!installed.available)
  console.warn(`IndexedDB in headless Chromium skipped: ${installed.reason}; ${installed.enable}`);

describeIf("levelStore(new BrowserLevel(name)) > IndexedDB in headless Chromium", () => {
  let server: Server | undefined;
  let browser: Browser | undefined;
  let origin = "";

  beforeAll(async () => {
    const bundle = await build({
      entryPoints: [fileURLToPath(new URL("./browser/page.ts", import.meta.url))],
      bundle: true,
      write: false,
      format: "esm",
      platform: "browser",
      target: "es2022",
      conditions: ["@durably/source"],
      alias: { events: fileURLToPath(new URL("./browser/events-shim.ts", import.meta.url)) },
      logLevel: "silent",
    });
    const script = bundle.outputFiles[0]?.text ?? "";
    server = createServer((request, response) => {
      if (request.url === "/page.js") {
        response.writeHead(200, { "content-type": "text/javascript" });
        response.end(script);
      } else {
        response.writeHead(200, { "content-type": "text/html" });
        response.end(
          '<!doctype html><title>loading</title><script type="module" src="/page.js"></script>',
        );
      }
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  });

  it("commits in a page, and after a page reload reopens and reads the same data back", async () => {
    const page = await (browser as Browser).newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    type Api = { write(name: string): Promise<number[]>; read(name: string): Promise<unknown> };
    await page.goto(origin);
    const ready = () =>
      (globalThis as unknown as { document: { title: string } }).document.title === "ready";
    await page.waitForFunction(ready);
    // These callbacks run inside the page, where page.ts installed `durably`.
    const seqs = await page.evaluate(() =>
      (globalThis as unknown as { durably: Api }).durably.write("notes"),
    );
    expect(seqs).toEqual([1, 2]);
    await page.reload();
    await page.waitForFunction(ready);
    const read = await page.evaluate(() =>
      (globalThis as unknown as { durably: Api }).durably.read("notes"),
    );
    expect(errors).toEqual([]);
    expect(read).toEqual({
      entries: [
        { id: 2, conversationId: 1, kind: "note", data: "hello" },
        { id: 4, conversationId: 1, kind: "note", data: "goodbye" },
      ],
      notes: { text: "after goodbye" },
      // 10 record and index keys, m/format, m/counters, and one commit-chain marker for the call.
      keys: 13,
      persistent: true,
      next: 5,
    });
    await page.close();
  });
});
