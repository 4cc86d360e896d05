import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { APPROVAL_ENTRY, Harness } from "@durably/core";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  APPROVAL_ANSWER,
  APPROVAL_MODEL,
  APPROVAL_NOTE,
  APPROVAL_QUESTION,
} from "../src/serve/approval-agent.ts";
import { viewerHarnessOptions } from "../src/serve/demo-agent.ts";
import type { ItemView, LiveView, UsageView } from "../src/serve/view-model.ts";
import {
  body,
  eventually,
  FAST,
  openEvents,
  sqliteWithRun,
  startInProcess,
  type InProcessViewer,
} from "./support/viewer-fixture.ts";

interface ConversationData {
  items: ItemView[];
  live: LiveView;
  usage: UsageView;
}

let dir = "";
let notes = "";
let viewer: InProcessViewer | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "durably-viewer-approvals-"));
  notes = join(dir, "notes.txt");
});

afterEach(async () => {
  await viewer?.close();
  viewer = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function conversationData(v: InProcessViewer, id: number): Promise<ConversationData> {
  return body<ConversationData>(await v.send(`/api/conversations/${id}`));
}

/** Starts the approval run from the API, as the page's button does; resolves once its call waits. */
async function waitingRun(v: InProcessViewer): Promise<{ id: number; toolCallId: string }> {
  const started = await v.post("/api/agent/run", { script: "approval" });
  expect(started.status, started.body).toBe(201);
  const id = body<{ conversationId: number }>(started).conversationId;
  const slot = await eventually(async () => {
    const data = await conversationData(v, id);
    return data.live.tools.find((t) => t.status === "approval");
  }, "the save_note call to wait for approval");
  expect(slot.toolName).toBe("save_note");
  expect(slot.approval?.arguments).toBe(JSON.stringify({ text: APPROVAL_NOTE }));
  return { id, toolCallId: slot.toolCallId };
}

async function readNotes(): Promise<string | undefined> {
  return readFile(notes, "utf8").catch(() => undefined);
}

const approvalEntries = (data: ConversationData): ItemView[] =>
  data.items.filter((i) => i.kind === APPROVAL_ENTRY);

describe("deciding a tool call from the viewer", () => {
  it("approves a waiting call: save_note runs once, a retried POST with the same requestId is the same decision, the run answers", async () => {
    const { file } = await sqliteWithRun(dir);
    viewer = await startInProcess({ backend: "sqlite", file }, { notesFile: notes });
    const { id, toolCallId } = await waitingRun(viewer);
    const events = await openEvents(viewer, `/api/conversations/${id}/events`);
    const snapshot = await events.next((e) => e.event === "snapshot");
    expect(
      (snapshot.data as ConversationData).live.tools.map((t) => t.status),
      "the stream shows the call waiting",
    ).toEqual(["approval"]);
    expect(await readNotes(), "nothing runs before the decision").toBeUndefined();

    const decision = { toolCallId, approved: true, requestId: "click-0001" };
    const first = await viewer.post(`/api/conversations/${id}/approvals`, decision);
    expect(first.status, first.body).toBe(200);
    const again = await viewer.post(`/api/conversations/${id}/approvals`, decision);
    expect(again.status, again.body).toBe(200);
    expect(body(again)).toEqual(body(first));

    await events.next(
      (e) =>
        e.event === "change" &&
        ((e.data as Partial<ConversationData>).items ?? []).some((i) =>
          i.messages.some(
            (m) =>
              m.role === "assistant" &&
              m.parts.some((p) => p.type === "text" && p.text === APPROVAL_ANSWER),
          ),
        ),
    );
    events.destroy();
    expect(await readNotes()).toBe(`${APPROVAL_NOTE}\n`);
    const data = await conversationData(viewer, id);
    expect(approvalEntries(data), "one decision stored").toHaveLength(1);
    const result = data.items.find((i) => i.messages[0]?.role === "toolResult");
    expect(result?.messages[0]).toMatchObject({ toolName: "save_note", isError: false });
    expect(data.items[0]?.messages[0]).toEqual({ role: "user", text: APPROVAL_QUESTION });
  });

  it("denies a waiting call with a reason: nothing is saved and the model reads the reason", async () => {
    viewer = await startInProcess({ backend: "memory" }, { notesFile: notes });
    const { id, toolCallId } = await waitingRun(viewer);
    const denied = await viewer.post(`/api/conversations/${id}/approvals`, {
      toolCallId,
      approved: false,
      reason: "  not on Fridays ",
      requestId: "click-0002",
    });
    expect(denied.status, denied.body).toBe(200);
    expect(body(denied)).toMatchObject({ approved: false, reason: "not on Fridays" });
    const data = await eventually(async () => {
      const d = await conversationData(viewer as InProcessViewer, id);
      return d.live.run === null ? d : undefined;
    }, "the run to end");
    const result = data.items.find((i) => i.messages[0]?.role === "toolResult")?.messages[0];
    expect(result).toMatchObject({ isError: true, text: "denied: not on Fridays" });
    expect(await readNotes()).toBeUndefined();
  });

  it("refuses a decision without the token or from another Origin, and stores nothing", async () => {
    const { file } = await sqliteWithRun(dir);
    viewer = await startInProcess({ backend: "sqlite", file }, { notesFile: notes });
    const { id, toolCallId } = await waitingRun(viewer);
    const path = `/api/conversations/${id}/approvals`;
    const payload = JSON.stringify({ toolCallId, approved: true, requestId: "click-0003" });
    viewer.resetCommits();
    const json = { "content-type": "application/json" };
    const noToken = await viewer.send(path, {
      method: "POST",
      headers: { ...json, cookie: null, origin: viewer.server.origin },
      body: payload,
    });
    expect(noToken.status).toBe(401);
    const otherOrigin = await viewer.send(path, {
      method: "POST",
      headers: { ...json, origin: "http://127.0.0.1:1" },
      body: payload,
    });
    expect(otherOrigin.status).toBe(403);
    expect(body(otherOrigin).error).toContain("a POST must come from this viewer's own page");
    const noOrigin = await viewer.send(path, { method: "POST", headers: json, body: payload });
    expect(noOrigin.status).toBe(403);
    const plainText = await viewer.send(path, {
      method: "POST",
      headers: { "content-type": "text/plain", origin: viewer.server.origin },
      body: payload,
    });
    expect(plainText.status).toBe(415);
    expect(viewer.commits(), "no commit").toEqual([]);
    const data = await conversationData(viewer, id);
    expect(data.live.tools.map((t) => t.status)).toEqual(["approval"]);
    expect(approvalEntries(data)).toEqual([]);
    expect(await readNotes()).toBeUndefined();
  });

  it("answers a call that is not waiting with the harness's message, and stores nothing", async () => {
    viewer = await startInProcess({ backend: "memory" }, { notesFile: notes });
    const { id, toolCallId } = await waitingRun(viewer);
    const path = `/api/conversations/${id}/approvals`;
    expect(
      (await viewer.post(path, { toolCallId, approved: true, requestId: "click-0004" })).status,
    ).toBe(200);
    await eventually(async () => {
      const d = await conversationData(viewer as InProcessViewer, id);
      return d.live.run === null ? d : undefined;
    }, "the run to end");
    viewer.resetCommits();
    const late = await viewer.post(path, { toolCallId, approved: false, requestId: "click-0005" });
    expect(late.status).toBe(409);
    expect(body(late).error).toMatch(
      new RegExp(
        `^not decided: approve: tool call "${toolCallId}" of conversation ${id} is not waiting for approval`,
      ),
    );
    const unknown = await viewer.post(path, {
      toolCallId: "call_9_9",
      approved: true,
      requestId: "click-0006",
    });
    expect(unknown.status).toBe(409);
    expect(body(unknown).error).toContain('tool call "call_9_9"');
    // The same requestId for a different decision: the harness says what it was used for.
    const reused = await viewer.post(path, {
      toolCallId,
      approved: false,
      requestId: "click-0004",
    });
    expect(reused.status).toBe(400);
    expect(body(reused).error).toContain("was used by submission");
    expect(
      viewer.commits().filter((c) => !c.deferred),
      "no stored commit",
    ).toEqual([]);
  });

  it("names what is wrong with a bad decision, and a conversation that does not exist", async () => {
    viewer = await startInProcess({ backend: "memory" }, { notesFile: notes });
    const cases: [unknown, string][] = [
      [{ approved: true, requestId: "click-0007" }, "toolCallId must be"],
      [
        { toolCallId: "x", approved: "yes", requestId: "click-0007" },
        "approved must be true or false",
      ],
      [{ toolCallId: "x", approved: true }, "requestId must be"],
      [{ toolCallId: "x", approved: true, requestId: "no" }, "requestId must be"],
      [
        { toolCallId: "x", approved: true, requestId: "click-0007", extra: 1 },
        "extra is not a field",
      ],
    ];
    for (const [decision, message] of cases) {
      const response = await viewer.post("/api/conversations/1/approvals", decision);
      expect(response.status, JSON.stringify(decision)).toBe(400);
      expect(body(response).error).toContain(message);
    }
    const missing = await viewer.post("/api/conversations/999/approvals", {
      toolCallId: "x",
      approved: true,
      requestId: "click-0008",
    });
    expect(missing.status).toBe(404);
    expect(body(missing).error).toContain("conversation 999 does not exist");
  });

  it("refuses to decide in a run another program started: the scheduler would continue it with the scripted model", async () => {
    const file = join(dir, "durably.sqlite");
    const harness = await Harness.open(
      await openSqliteStorage(file),
      viewerHarnessOptions(FAST, notes),
    );
    const conversation = await harness.createConversation();
    await conversation.submit({
      type: "input",
      content: APPROVAL_QUESTION,
      model: APPROVAL_MODEL,
      requestId: "another-program",
    });
    const [pending] = await eventually(async () => {
      const list = await conversation.approvals();
      return list.length > 0 ? list : undefined;
    }, "the call to wait");
    await harness.close();

    viewer = await startInProcess({ backend: "sqlite", file }, { notesFile: notes });
    expect(viewer.storage.status).toMatchObject({
      state: "open",
      running: false,
      othersUnfinished: [conversation.id],
    });
    viewer.resetCommits();
    const refused = await viewer.post(`/api/conversations/${conversation.id}/approvals`, {
      toolCallId: pending?.toolCallId,
      approved: true,
      requestId: "click-0009",
    });
    expect(refused.status).toBe(409);
    expect(body(refused).error).toContain(
      `not decided: conversation ${conversation.id} has an unfinished run that another program started`,
    );
    expect(viewer.commits()).toEqual([]);
    expect(await readNotes()).toBeUndefined();
  });
});

describe("usage totals in the viewer", () => {
  it("sends the conversation's totals in its stream and the storage's in the feed, updated as answers are stored", async () => {
    viewer = await startInProcess({ backend: "memory" }, { notesFile: notes });
    const feed = await openEvents(viewer, "/api/events");
    const { id, toolCallId } = await waitingRun(viewer);
    const events = await openEvents(viewer, `/api/conversations/${id}/events`);
    const snapshot = (await events.next((e) => e.event === "snapshot")).data as ConversationData;
    expect(snapshot.usage.total.requests, "turn 1 is stored").toBe(1);
    expect(snapshot.usage.models.map((m) => m.name)).toEqual([APPROVAL_MODEL]);
    await viewer.post(`/api/conversations/${id}/approvals`, {
      toolCallId,
      approved: true,
      requestId: "click-0010",
    });
    const change = await events.next(
      (e) =>
        e.event === "change" && (e.data as Partial<ConversationData>).usage?.total.requests === 2,
    );
    const usage = (change.data as ConversationData).usage;
    expect(usage.total.inputTokens).toBeGreaterThan(0);
    expect(usage.total.outputTokens).toBeGreaterThan(0);
    expect(usage.total.cost, "the scripted model declares no prices").toBeUndefined();
    expect(usage.total.unpriced).toBe(2);
    const whole = await feed.next(
      (e) => e.event === "usage" && (e.data as UsageView).total.requests === 2,
    );
    expect((whole.data as UsageView).total).toEqual(usage.total);
    const api = body<{ total: { requests: number } }>(await viewer.send("/api/usage"));
    expect(api.total.requests).toBe(2);
    events.destroy();
    feed.destroy();
  });
});
