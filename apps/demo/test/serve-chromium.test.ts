import type { ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APPROVAL_ANSWER, APPROVAL_NOTE } from "../src/serve/approval-agent.ts";
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
const README_APPROVAL_SCREENSHOT = fileURLToPath(
  new URL("../docs/viewer-approval.png", import.meta.url),
);

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
      await page.getByRole("button", { name: "Run the scripted agent", exact: true }).click();
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

  describe("tool approvals", () => {
    let approvalDir = "";
    let notes = "";
    let asking: ViewerProcess | undefined;
    /** A second run left waiting by one test for the next ones. */
    let waiting: { id: number; toolCallId: string } | undefined;

    beforeAll(async () => {
      approvalDir = await mkdtemp(join(tmpdir(), "durably-viewer-chromium-approval-"));
      notes = join(approvalDir, "notes.txt");
      await sqliteWithRun(approvalDir);
      asking = await startViewerProcess([approvalDir, "--notes", notes]);
    }, 60_000);

    afterAll(async () => {
      await asking?.stop();
      if (approvalDir) await rm(approvalDir, { recursive: true, force: true });
    });

    const noteLines = async (): Promise<string[]> =>
      (await readFile(notes, "utf8").catch(() => "")).split("\n").filter((l) => l !== "");

    /** A POST as the page makes it: the cookie, this viewer's Origin, JSON. */
    const postAsPage = (v: ViewerProcess, path: string, value: unknown) =>
      send(v.port, path, {
        method: "POST",
        headers: {
          ...cookieHeader(v),
          origin: v.origin,
          "content-type": "application/json",
        },
        body: JSON.stringify(value),
      });

    /** Starts the run whose tool asks first from the page, and waits for its call to wait. */
    const startAskingRun = async (page: Page, v: ViewerProcess) => {
      await page.goto(v.url);
      await page
        .getByRole("button", { name: "Run the scripted agent with a tool that asks first" })
        .click();
      await page.waitForURL(/\?c=\d+$/);
      const id = Number(new URL(page.url()).searchParams.get("c"));
      const card = page.locator(".tool-call", { hasText: "save_note" });
      await card.locator(".badge", { hasText: "waiting for approval" }).waitFor();
      return { id, card };
    };

    const pendingCall = async (v: ViewerProcess, id: number): Promise<string | undefined> => {
      const data = JSON.parse(
        (await send(v.port, `/api/conversations/${id}`, { headers: cookieHeader(v) })).body,
      ) as { live: { tools: { toolCallId: string; status: string }[] } };
      return data.live.tools.find((t) => t.status === "approval")?.toolCallId;
    };

    it("a tool approval clicked in the page resumes the run; the buttons work from the keyboard with a visible focus, and a reload shows the same state", async () => {
      const v = asking as ViewerProcess;
      const { page, errors } = await newPage();
      const { id, card } = await startAskingRun(page, v);
      await expect(card.locator(".arguments").innerText()).resolves.toBe(
        JSON.stringify({ text: APPROVAL_NOTE }),
      );
      await expect(page.locator("#conversation-state").innerText()).resolves.toBe(
        "waiting for your approval",
      );
      expect(await page.evaluate(lowContrastText), "contrast while asking").toEqual([]);
      expect(await noteLines(), "nothing saved before the decision").toEqual([]);

      // A reload while it asks: the same call, still asking.
      await page.reload();
      await card.locator(".badge", { hasText: "waiting for approval" }).waitFor();
      await page.locator("#conversation-usage", { hasText: "1 model call:" }).waitFor();
      const screenshot =
        process.env.UPDATE_VIEWER_SCREENSHOT === "1"
          ? README_APPROVAL_SCREENSHOT
          : join(approvalDir, "viewer-approval.png");
      await page.screenshot({ path: screenshot });

      // From the keyboard: Tab reaches Approve, the reason field and Deny, each with a visible outline.
      const seen: { name: string; outline: string }[] = [];
      for (let i = 0; i < 40 && !seen.some((f) => f.name === "button: Deny"); i++) {
        await page.keyboard.press("Tab");
        seen.push(await page.evaluate(focusedElement));
      }
      const controls = seen.filter((f) =>
        ["button: Approve", "input: ", "button: Deny"].includes(f.name),
      );
      expect(controls.map((f) => f.name)).toEqual(["button: Approve", "input: ", "button: Deny"]);
      for (const f of controls) expect(f.outline, f.name).toMatch(/^solid [3-9]px$/);
      await expect(
        page.getByLabel("Reason for a denial (optional)").getAttribute("type"),
      ).resolves.toBe("text");
      await page.getByRole("button", { name: "Approve" }).focus();
      await page.keyboard.press("Enter");

      // The run goes on: the decision, the tool's stored result, the answer.
      await expect(
        card.locator(".badge", { hasText: /^done$/ }).waitFor(),
      ).resolves.toBeUndefined();
      await expect(card.locator(".result-text").innerText()).resolves.toBe(`saved to ${notes}`);
      await page.locator("#transcript .item", { hasText: APPROVAL_ANSWER }).waitFor();
      await page
        .locator("#transcript .decision", { hasText: "Approved save_note (call call_1_1)" })
        .waitFor();
      await page.locator("#conversation-usage", { hasText: "2 model calls:" }).waitFor();
      await page
        .locator("#storage-usage", { hasText: /^Whole storage: \d+ model calls: / })
        .waitFor();
      await expect(page.locator("#conversation-state").innerText()).resolves.toBe("idle");
      expect(await noteLines()).toEqual([APPROVAL_NOTE]);
      const settled = await transcript(page);
      expect(await page.locator(".approval").count(), "no decision box left").toBe(0);

      await page.reload();
      await page.locator("#transcript .item", { hasText: APPROVAL_ANSWER }).waitFor();
      expect(await transcript(page)).toBe(settled);
      expect(await pendingCall(v, id)).toBeUndefined();
      expect(errors).toEqual([]);
      await page.close();
    });

    it("refuses an approval posted by a page on another local origin: the call still waits", async () => {
      const v = asking as ViewerProcess;
      const started = await postAsPage(v, "/api/agent/run", { script: "approval" });
      expect(started.status, started.body).toBe(201);
      const id = (JSON.parse(started.body) as { conversationId: number }).conversationId;
      let toolCallId: string | undefined;
      for (let i = 0; i < 100 && toolCallId === undefined; i++) {
        toolCallId = await pendingCall(v, id);
        if (toolCallId === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      expect(toolCallId, "the second run's call waits").toBeDefined();
      waiting = { id, toolCallId: toolCallId as string };
      const target = `${v.origin}/api/conversations/${id}/approvals`;
      const decision = JSON.stringify({ toolCallId, approved: true, requestId: "evil-click-1" });
      const evil: Server = createServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/html" });
        response.end(`<!doctype html><title>evil</title>
<script>
  const target = ${JSON.stringify(target)};
  const body = ${JSON.stringify(decision)};
  fetch(target, { method: "POST", mode: "no-cors", credentials: "include", body })
    .catch(() => undefined)
    .then(() => fetch(target, { method: "POST", credentials: "include", headers: { "content-type": "application/json" }, body }))
    .catch(() => undefined)
    .finally(() => { document.title = "sent"; });
</script>`);
      });
      await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
      try {
        const { page } = await newPage();
        await page.goto(v.url); // the viewer's cookie is in this browser
        await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
        await page.waitForFunction('document.title === "sent"');
        await page.close();
      } finally {
        evil.closeAllConnections();
        await new Promise((resolve) => evil.close(resolve));
      }
      expect(v.stderr()).toMatch(new RegExp(`refused POST /api/conversations/${id}/approvals`));
      expect(await pendingCall(v, id), "still waiting").toBe(toolCallId);
      expect(await noteLines()).toEqual([APPROVAL_NOTE]);
    });

    it("shows the error in the page when the call was already decided elsewhere", async () => {
      const v = asking as ViewerProcess;
      const { id, toolCallId } = waiting as { id: number; toolCallId: string };
      const { page, errors } = await newPage();
      // This page's stream is cut, so it keeps showing the buttons after the decision is made elsewhere.
      await page.route("**/api/conversations/*/events", (route) => route.abort());
      await page.goto(`${v.url}&c=${id}`);
      const card = page.locator(".tool-call", { hasText: "save_note" });
      await card.locator(".badge", { hasText: "waiting for approval" }).waitFor();
      const elsewhere = await postAsPage(v, `/api/conversations/${id}/approvals`, {
        toolCallId,
        approved: true,
        requestId: "other-tab-1",
      });
      expect(elsewhere.status, elsewhere.body).toBe(200);
      await page.getByLabel("Reason for a denial (optional)").fill("changed my mind");
      await page.getByRole("button", { name: "Deny" }).click();
      await card
        .locator(".approval-message", {
          hasText: `Not decided: approve: tool call "${toolCallId}" of conversation ${id} is not waiting for approval`,
        })
        .waitFor();
      expect(await page.evaluate(lowContrastText), "contrast of the error").toEqual([]);
      // Approved once, by the other tab; the denial stored nothing.
      for (let i = 0; i < 100 && (await noteLines()).length < 2; i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(await noteLines()).toEqual([APPROVAL_NOTE, APPROVAL_NOTE]);
      const data = JSON.parse(
        (await send(v.port, `/api/conversations/${id}`, { headers: cookieHeader(v) })).body,
      ) as { items: { kind: string }[] };
      expect(data.items.filter((i) => i.kind === "durably.approval")).toHaveLength(1);
      expect(errors).toEqual([]);
      await page.close();
    });

    it("sends a decision whose answer was lost again with the same requestId: the call is decided once", async () => {
      const v = asking as ViewerProcess;
      const before = await noteLines();
      const { page, errors } = await newPage();
      const { id } = await startAskingRun(page, v);
      // The first POST reaches the server, which stores the decision; its answer never reaches the page.
      const posted: string[] = [];
      await page.route(`**/api/conversations/${id}/approvals`, async (route) => {
        posted.push(route.request().postData() ?? "");
        if (posted.length === 1) {
          const answer = await route.fetch();
          expect(answer.status()).toBe(200);
          await route.abort("connectionreset");
        } else await route.continue();
      });
      await page.getByRole("button", { name: "Approve" }).click();
      await page.locator("#transcript .item", { hasText: APPROVAL_ANSWER }).waitFor();
      expect(posted).toHaveLength(2);
      const [first, second] = posted.map((b) => JSON.parse(b) as { requestId: string });
      expect(second?.requestId).toBe(first?.requestId);
      expect(await noteLines()).toEqual([...before, APPROVAL_NOTE]);
      const data = JSON.parse(
        (await send(v.port, `/api/conversations/${id}`, { headers: cookieHeader(v) })).body,
      ) as { items: { kind: string }[] };
      expect(data.items.filter((i) => i.kind === "durably.approval")).toHaveLength(1);
      expect(v.stderr()).not.toMatch(/error on/);
      expect(errors).toEqual([]);
      await page.close();
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
