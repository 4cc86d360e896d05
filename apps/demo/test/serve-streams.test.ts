import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Harness, type ConversationId, type Model } from "@durably/core";
import { openSqliteStorage } from "@durably/storage-sqlite";
import {
  VIEWER_ANSWER,
  VIEWER_QUESTION,
  VIEWER_REQUEST_ID,
  viewerHarnessOptions,
} from "../src/serve/demo-agent.ts";
import type { ItemView, LiveView } from "../src/serve/view-model.ts";
import {
  eventually,
  openEvents,
  sqliteWithRun,
  startInProcess,
  type InProcessViewer,
  body,
} from "./support/viewer-fixture.ts";

let dir = "";
let viewer: InProcessViewer | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "durably-viewer-streams-"));
});

afterEach(async () => {
  await viewer?.close();
  viewer = undefined;
  await rm(dir, { recursive: true, force: true });
});

const SLOW = { chunkDelayMs: 5, toolStepMs: 30, retryDelayMs: 50 };

type Snapshot = { items: ItemView[]; live: LiveView };
type Change = { items: ItemView[]; live?: LiveView };

/** Starts the viewer's scripted agent through the API, as the page's button does. */
async function run(v: InProcessViewer): Promise<ConversationId> {
  const response = await v.post("/api/agent/run");
  expect(response.status, response.body).toBe(201);
  return (JSON.parse(response.body) as { conversationId: ConversationId }).conversationId;
}

async function view(v: InProcessViewer, id: number): Promise<Snapshot> {
  const response = await v.send(`/api/conversations/${id}`);
  expect(response.status, response.body).toBe(200);
  return JSON.parse(response.body) as Snapshot;
}

/** A conversation left mid-answer by a program with its own model, which this viewer does not have. */
async function interruptedRun(file: string, requestId?: string): Promise<ConversationId> {
  const model: Model = {
    async *stream(_request, options) {
      yield { type: "text", delta: "one, " };
      await new Promise((_resolve, reject) =>
        options?.signal?.addEventListener("abort", () => reject(options.signal?.reason as Error)),
      );
    },
  };
  const harness = await Harness.open(await openSqliteStorage(file), {
    ...viewerHarnessOptions({ chunkDelayMs: 20, toolStepMs: 0, retryDelayMs: 1 }),
    ...(requestId === VIEWER_REQUEST_ID ? {} : { models: { default: model } }),
  });
  const conversation = await harness.createConversation();
  await conversation.submit({
    type: "input",
    content: requestId === VIEWER_REQUEST_ID ? VIEWER_QUESTION : "Count to ten",
    ...(requestId !== undefined ? { requestId } : {}),
  });
  await new Promise<void>((resolve) => {
    const stop = conversation.watch((v) => {
      if ((v.live.generation?.text ?? "") !== "") {
        setTimeout(() => stop());
        resolve();
      }
    });
  });
  await harness.close(); // the generation is cut short: its task stays running in storage
  return conversation.id;
}

describe("the viewer's streams", () => {
  it("streams a run: the answer's text arrives in live events before the entry that ends the run", async () => {
    const { file } = await sqliteWithRun(dir);
    viewer = await startInProcess({ backend: "sqlite", file }, { pacing: SLOW });
    const id = await run(viewer);
    const client = await openEvents(viewer, `/api/conversations/${id}/events`);
    expect(client.status).toBe(200);
    const answer = await client.next(
      (e) =>
        e.event === "change" &&
        (e.data as Change).items.some((i) =>
          i.messages.some(
            (m) =>
              m.role === "assistant" &&
              m.parts.some((p) => p.type === "text" && p.text === VIEWER_ANSWER),
          ),
        ),
    );
    const partial = client.events.find(
      (e) =>
        e.at <= answer.at &&
        (() => {
          const text = (e.data as Change).live?.generation?.text ?? "";
          return (
            text.length > 0 && text.length < VIEWER_ANSWER.length && VIEWER_ANSWER.startsWith(text)
          );
        })(),
    );
    expect(partial, "a part of the answer, streamed before it was stored").toBeDefined();
    const views = client.events.filter((e) => e.event === "snapshot" || e.event === "change");
    expect(views[0]?.event, "the first view event is the whole view").toBe("snapshot");
    expect(views.filter((e) => e.event === "snapshot")).toHaveLength(1);
    const storage = await client.next(
      (e) => e.event === "storage" && JSON.stringify(e.data).includes(VIEWER_ANSWER.slice(0, 30)),
    );
    expect(JSON.stringify(storage.data)).toContain(`FROM entries WHERE conversation_id = ${id}`);
    client.destroy();
  });

  it("runs the scripted agent on a fresh memory storage too", async () => {
    viewer = await startInProcess({ backend: "memory" });
    const id = await run(viewer);
    const done = await eventually(async () => {
      const v = await view(viewer as InProcessViewer, id);
      return v.live.run === null ? v : undefined;
    }, "the run to finish");
    expect(done.items).toHaveLength(4);
    const panel = body<{ summary: string; sections: unknown[] }>(
      await viewer.send(`/api/conversations/${id}/storage`),
    );
    expect(panel).toEqual({
      summary:
        "Memory storage: the records live in this process only; nothing is written anywhere, and stopping the server loses them.",
      sections: [],
    });
  });

  it("a conversation id that does not exist is a 404 naming it and the storage; the server keeps serving", async () => {
    const { file, conversationId } = await sqliteWithRun(dir);
    viewer = await startInProcess({ backend: "sqlite", file });
    viewer.resetCommits();
    for (const path of [
      "/api/conversations/424242",
      "/api/conversations/424242/events",
      "/api/conversations/424242/storage",
    ]) {
      const response = await viewer.send(path);
      expect(response.status, path).toBe(404);
      expect(body(response).error, path).toBe(
        `conversation 424242 does not exist in this storage (SQLite at ${file})`,
      );
    }
    for (const bad of ["abc", "0", "-1", "1.5", "99999999999999999"]) {
      const response = await viewer.send(`/api/conversations/${bad}`);
      expect(response.status, bad).toBe(400);
      expect(body(response).error, bad).toContain("is not a conversation id");
    }
    expect((await viewer.send("/api/conversations/1/bogus")).status).toBe(404);
    expect(viewer.commits()).toEqual([]);
    expect((await view(viewer, conversationId)).items).toHaveLength(4);
  });

  it("a client that disconnects mid-stream: its watch stops, the run goes on, the server keeps serving", async () => {
    const { file } = await sqliteWithRun(dir);
    viewer = await startInProcess({ backend: "sqlite", file }, { pacing: SLOW });
    const id = await run(viewer);
    const client = await openEvents(viewer, `/api/conversations/${id}/events`);
    await client.next((e) => e.event === "change" && (e.data as Change).live?.generation != null);
    expect(viewer.server.streams.size).toBe(1);
    client.destroy();
    await eventually(
      () => (viewer?.server.streams.size === 0 ? true : undefined),
      "the stream to close",
    );
    const done = await eventually(async () => {
      const v = await view(viewer as InProcessViewer, id);
      return v.live.run === null ? v : undefined;
    }, "the run to finish");
    expect(done.items.map((i) => i.kind)).toEqual([
      "durably.user",
      "durably.assistant",
      "durably.tool-result",
      "durably.assistant",
    ]);
    const again = await openEvents(viewer, `/api/conversations/${id}/events`);
    const snapshot = await again.next((e) => e.event === "snapshot");
    expect((snapshot.data as Snapshot).items).toHaveLength(4);
    again.destroy();
    expect(viewer.log.filter((line) => !line.startsWith("refused"))).toEqual([]);
  });

  it("a client that disconnects from an idle conversation leaves nothing behind and writes nothing", async () => {
    const { file, conversationId } = await sqliteWithRun(dir);
    viewer = await startInProcess({ backend: "sqlite", file });
    viewer.resetCommits();
    const client = await openEvents(viewer, `/api/conversations/${conversationId}/events`);
    await client.next((e) => e.event === "snapshot");
    await client.next((e) => e.event === "storage");
    client.destroy();
    await eventually(
      () => (viewer?.server.streams.size === 0 ? true : undefined),
      "the stream to close",
    );
    expect(viewer.commits()).toEqual([]);
  });
});

describe("the viewer and runs it did not start", () => {
  it("shows another program's unfinished run as stored, never continues it, and refuses to start its scheduler", async () => {
    const { file } = await sqliteWithRun(dir);
    const theirs = await interruptedRun(file);
    viewer = await startInProcess({ backend: "sqlite", file });
    expect(viewer.storage.status).toEqual({
      state: "open",
      running: false,
      othersUnfinished: [theirs],
    });
    viewer.resetCommits();
    const refused = await viewer.post("/api/agent/run");
    expect(refused.status).toBe(409);
    expect(body(refused).error).toContain(
      `conversation ${theirs} has an unfinished run that another program started`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(viewer.commits()).toEqual([]);
    const shown = await view(viewer, theirs);
    expect(shown.items.map((i) => i.kind)).toEqual(["durably.user"]);
    expect(shown.live.run).not.toBeNull();
    expect(shown.live.generation?.text).toBe("one, ");
  });

  it("after a restart, resumes a run of its own scripted agent from where storage has it", async () => {
    const file = join(dir, "durably.sqlite");
    const ours = await interruptedRun(file, VIEWER_REQUEST_ID);
    viewer = await startInProcess({ backend: "sqlite", file });
    expect(viewer.storage.status).toEqual({ state: "open", running: true, othersUnfinished: [] });
    expect(viewer.log).toContain(
      `resumed the viewer's own unfinished run(s) in conversation(s) ${ours}`,
    );
    const done = await eventually(async () => {
      const v = await view(viewer as InProcessViewer, ours);
      return v.live.run === null ? v : undefined;
    }, "the resumed run to finish");
    expect(done.items.map((i) => i.kind)).toEqual([
      "durably.user",
      "durably.assistant",
      "durably.tool-result",
      "durably.assistant",
    ]);
  });

  it("releases the storage for another program on request, and opens it again", async () => {
    const { file, conversationId } = await sqliteWithRun(dir);
    viewer = await startInProcess({ backend: "sqlite", file });
    const client = await openEvents(viewer, `/api/conversations/${conversationId}/events`);
    await client.next((e) => e.event === "snapshot");
    const released = await viewer.post("/api/storage/release");
    expect(JSON.parse(released.body)).toEqual({ status: { state: "released" } });
    await client.next(
      (e) => e.event === "status" && (e.data as { state: string }).state === "released",
    );
    const other = await openSqliteStorage(file); // another owner can have it now
    await other.close();
    expect((await viewer.send(`/api/conversations/${conversationId}`)).status).toBe(503);
    const reopened = await viewer.post("/api/storage/open");
    expect(body(reopened).status.state).toBe("open");
    expect((await view(viewer, conversationId)).items).toHaveLength(4);
  });
});
