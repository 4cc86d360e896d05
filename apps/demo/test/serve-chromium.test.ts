import type { ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VIEWER_ANSWER, VIEWER_FAILURE, VIEWER_REASONING } from "../src/serve/demo-agent.ts";
import { CHROMIUM_AVAILABLE, launchChromium, type Chromium } from "./support/chromium.ts";
import {
  focusedElement,
  lowContrastText,
  streamingPartial,
  streamingReasoning,
} from "./support/page-checks.js";
import { startHolder, stopHolder } from "./support/holder.ts";
import { send, sqliteWithRun } from "./support/viewer-fixture.ts";
import { startViewerProcess, type ViewerProcess } from "./support/viewer-process.ts";

/**
 * The README's screenshot is rewritten only on request
 * (UPDATE_VIEWER_SCREENSHOT=1); otherwise it goes to the run's temporary
 * directory, so running the tests leaves the worktree as it was.
 */
const README_SCREENSHOT = fileURLToPath(new URL("../docs/viewer.png", import.meta.url));

let browser: Chromium;
let dir = "";
let viewer: ViewerProcess | undefined;
let conversationId = 0;
let transcriptText = "";
let panelText = "";

function cookieHeader(v: ViewerProcess): Record<string, string> {
  return { cookie: `durably_viewer_${v.port}=${v.token}` };
}

async function newPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  return { page, errors };
}

const transcript = (page: Page): Promise<string> => page.locator("#transcript").innerText();

/**
 * The storage panel once it shows the settled run (the submission "done")
 * and stops changing: it is re-read after stored commits, a little behind
 * the transcript.
 */
async function settledPanel(page: Page): Promise<string> {
  const panel = page.locator("#storage-sections");
  let last = "";
  for (let tries = 0; tries < 50; tries++) {
    const text = await panel.innerText();
    if (text === last && /\bdone\b/.test(text)) return text;
    last = text;
    await page.waitForTimeout(400);
  }
  throw new Error(`the storage panel did not settle: ${last}`);
}

describe.skipIf(!CHROMIUM_AVAILABLE)("the viewer in headless Chromium", () => {
  beforeAll(async () => {
    browser = await launchChromium();
    dir = await mkdtemp(join(tmpdir(), "durably-viewer-chromium-"));
    await sqliteWithRun(dir); // an earlier conversation, so the list has two
  }, 60_000);

  afterAll(async () => {
    await viewer?.stop();
    await browser?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe("a run of the scripted agent", () => {
    it("streams a scripted agent run into the page: the answer appears before the run ends", async () => {
      viewer = await startViewerProcess([dir]);
      const { page, errors } = await newPage();
      await page.goto(viewer.url);
      await page.getByRole("button", { name: "Run the scripted agent" }).click();
      await page.waitForURL(/\?c=\d+$/);
      conversationId = Number(new URL(page.url()).searchParams.get("c"));

      // The reasoning streams first, in the live block.
      await page.waitForFunction(streamingReasoning, VIEWER_REASONING);

      // The tool runs: its status and its output so far, marked as deferred progress.
      const card = page.locator(".tool-call", { hasText: "add" });
      await card.locator(".badge.status-running").waitFor();
      await card.locator(".deferred-label", { hasText: "deferred progress" }).waitFor();
      await card.locator(".output", { hasText: "checking the arguments" }).waitFor();

      // The first try at the answer fails; the wait for the retry counts down.
      const retry = page.locator("#live .retry");
      await retry
        .filter({ hasText: /^Retrying the model call: attempt 2 of 5, in [1-3] s\./ })
        .waitFor();
      await expect(retry.innerText()).resolves.toContain(
        `The previous try failed: ${VIEWER_FAILURE} (rate_limited).`,
      );
      await expect(page.locator("#announcer").innerText()).resolves.toContain(
        "The model call failed; retrying, attempt 2 of 5.",
      );
      expect(await page.evaluate(lowContrastText), "contrast while waiting to retry").toEqual([]);

      // The answer streams in the live block, announced politely, before it is an entry.
      // Far enough into the answer for the screenshot to show it streaming.
      const partial = await page.waitForFunction(streamingPartial, VIEWER_ANSWER);
      expect(VIEWER_ANSWER.startsWith(String(await partial.jsonValue()))).toBe(true);
      expect(await page.locator(".streaming-text").getAttribute("aria-live")).toBe("polite");
      expect(await page.evaluate(lowContrastText), "contrast while streaming").toEqual([]);
      await expect(page.locator("#conversation-state").innerText()).resolves.toBe("running");
      const screenshot =
        process.env.UPDATE_VIEWER_SCREENSHOT === "1" ? README_SCREENSHOT : join(dir, "viewer.png");
      await page.screenshot({ path: screenshot });
      expect((await readFile(screenshot)).subarray(1, 4).toString()).toBe("PNG");

      // The run ends: the answer is an entry, the tool call shows its stored result.
      await page.locator("#transcript .item", { hasText: VIEWER_ANSWER }).waitFor();
      await page.locator("#live").waitFor({ state: "hidden" });
      await expect(page.locator("#conversation-state").innerText()).resolves.toBe("idle");
      await expect(card.locator(".badge").innerText()).resolves.toBe("done");
      await expect(card.locator(".result-text").innerText()).resolves.toBe("5");
      await expect(retry.isHidden()).resolves.toBe(true);
      transcriptText = await transcript(page);
      // The stored reasoning is folded away in the turn that had it; the keyboard opens it.
      const reasoning = page.locator("#transcript details.reasoning");
      await expect(reasoning.getAttribute("open")).resolves.toBeNull();
      await reasoning.locator("summary").focus();
      await page.keyboard.press("Enter");
      await expect(reasoning.locator("p").innerText()).resolves.toBe(VIEWER_REASONING);
      panelText = await settledPanel(page);
      expect(panelText).toContain(`FROM entries WHERE conversation_id = ${conversationId}`);
      expect(errors).toEqual([]);
      await page.close();
    });

    it("shows the same state after a reload", async () => {
      const { page, errors } = await newPage();
      await page.goto(`${(viewer as ViewerProcess).url}&c=${conversationId}`);
      await page.locator("#transcript .item", { hasText: VIEWER_ANSWER }).waitFor();
      expect(await transcript(page)).toBe(transcriptText);
      await page.reload();
      await page.locator("#transcript .item", { hasText: VIEWER_ANSWER }).waitFor();
      expect(await transcript(page)).toBe(transcriptText);
      expect(await settledPanel(page)).toBe(panelText);
      expect(errors).toEqual([]);
      await page.close();
    });

    it("shows the same state after the server restarts", async () => {
      const { page, errors } = await newPage();
      await page.goto(`${(viewer as ViewerProcess).url}&c=${conversationId}`);
      await page.locator("#transcript .item", { hasText: VIEWER_ANSWER }).waitFor();
      expect(await (viewer as ViewerProcess).stop("SIGTERM")).toEqual({ code: 0, signal: null });
      // The old page keeps what it showed and says the viewer went away.
      await page.locator("#status", { hasText: /Reconnecting|not reachable/ }).waitFor();
      expect(await transcript(page)).toBe(transcriptText);

      viewer = await startViewerProcess([dir]);
      await page.goto(`${viewer.url}&c=${conversationId}`);
      await page.locator("#transcript .item", { hasText: VIEWER_ANSWER }).waitFor();
      expect(await transcript(page)).toBe(transcriptText);
      expect(await settledPanel(page)).toBe(panelText);
      expect(errors).toEqual([]);
      await page.close();
    });

    it("is operable from the keyboard, with a visible focus, and its text has readable contrast", async () => {
      const { page, errors } = await newPage();
      await page.goto(`${(viewer as ViewerProcess).url}&c=${conversationId}`);
      await page.locator("#transcript .item", { hasText: VIEWER_ANSWER }).waitFor();
      await page.locator("#conversation-list a").first().waitFor();
      const focused: { name: string; outline: string }[] = [];
      for (let i = 0; i < 8; i++) {
        await page.keyboard.press("Tab");
        focused.push(await page.evaluate(focusedElement));
      }
      expect(focused[0]?.name).toBe("a: Skip to the conversation");
      expect(focused.map((f) => f.name)).toEqual(
        expect.arrayContaining([
          "button: Release the storage",
          "button: Run the scripted agent",
          `a: Conversation ${conversationId}`,
        ]),
      );
      for (const f of focused) expect(f.outline, f.name).toMatch(/^solid [3-9]px$/);

      // Enter on a conversation link opens it.
      const other = page.locator("#conversation-list a").nth(1);
      const href = await other.getAttribute("href");
      await other.focus();
      await page.keyboard.press("Enter");
      await page.waitForURL((url) => `${url.pathname}${url.search}` === href);

      const low = await page.evaluate(lowContrastText);
      expect(low).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    });

    it("refuses a POST made by a page on another local origin: nothing runs", async () => {
      const v = viewer as ViewerProcess;
      const before = (await send(v.port, "/api/conversations", { headers: cookieHeader(v) })).body;
      const target = `${v.origin}/api/agent/run`;
      const evil: Server = createServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/html" });
        response.end(`<!doctype html><title>evil</title>
<form id="f" method="post" action="${target}" enctype="text/plain"><input name="x" value="y"></form>
<script>
  fetch(${JSON.stringify(target)}, { method: "POST", mode: "no-cors", credentials: "include", body: "{}" })
    .catch(() => undefined)
    .then(() => fetch(${JSON.stringify(target)}, { method: "POST", credentials: "include", headers: { "content-type": "application/json" }, body: "{}" }))
    .catch(() => undefined)
    .finally(() => { document.title = "sent"; document.getElementById("f").submit(); });
</script>`);
      });
      await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
      try {
        const { page } = await newPage();
        // The viewer's cookie is in this browser: log in first, as the user would have.
        await page.goto(v.url);
        await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
        await page.waitForURL(target);
        await page.close();
      } finally {
        evil.closeAllConnections(); // Chromium keeps its connection alive
        await new Promise((resolve) => evil.close(resolve));
      }
      expect(v.stderr()).toMatch(/refused POST \/api\/agent\/run/);
      expect(v.stderr()).not.toMatch(/error on/);
      expect((await send(v.port, "/api/conversations", { headers: cookieHeader(v) })).body).toBe(
        before,
      );
    });
  });

  describe("a locked storage", () => {
    let lockedDir = "";
    let held: ChildProcess | undefined;
    let locked: ViewerProcess | undefined;

    afterAll(async () => {
      held?.kill("SIGKILL");
      await locked?.stop();
      if (lockedDir) await rm(lockedDir, { recursive: true, force: true });
    });

    it("says which process holds it and opens it from the page once the lock is free", async () => {
      lockedDir = await mkdtemp(join(tmpdir(), "durably-viewer-chromium-locked-"));
      const { conversationId: id } = await sqliteWithRun(lockedDir);
      held = await startHolder("sqlite", lockedDir);
      locked = await startViewerProcess([lockedDir]);
      const { page, errors } = await newPage();
      await page.goto(`${locked.url}&c=${id}`);
      await page
        .locator("#status", {
          hasText: `Locked: process ${held.pid} (node) has this storage open.`,
        })
        .waitFor();
      await page.getByRole("button", { name: "Open when the lock is free" }).click();
      await page
        .locator("#status", { hasText: "Waiting: it opens here as soon as the lock is free." })
        .waitFor();
      await stopHolder(held);
      held = undefined;
      await page.locator("#status", { hasText: "Open: this viewer owns the storage" }).waitFor();
      await page.locator("#transcript .item", { hasText: VIEWER_ANSWER }).waitFor();
      await page.locator(`#conversation-list a[href="/?c=${id}"]`).waitFor();
      expect(errors).toEqual([]);
      await page.close();
    });
  });
});
