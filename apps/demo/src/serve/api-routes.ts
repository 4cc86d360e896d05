import type { IncomingMessage, ServerResponse } from "node:http";
import { UnknownRecord, type Conversation, type ConversationId } from "@durably/core";
import { listConversations } from "./conversation-list.js";
import { streamConversation, type StreamPacing } from "./conversation-stream.js";
import { APPROVAL_MODEL, APPROVAL_QUESTION } from "./approval-agent.js";
import { approvalRequest, decide } from "./approval-route.js";
import { VIEWER_QUESTION, VIEWER_REQUEST_ID } from "./demo-agent.js";
import { HttpError, readJsonBody, sendJson } from "./http-util.js";
import { SECURITY_HEADERS } from "./security.js";
import { SseStream } from "./sse.js";
import type { StorageFeed } from "./storage-feed.js";
import type { Opened, ViewerStorage } from "./viewer-storage.js";
import { itemView, liveView, usageView } from "./view-model.js";

export interface ApiContext {
  storage: ViewerStorage;
  feed: StorageFeed;
  pacing: StreamPacing;
  /** Every open event stream, so shutdown can end them and tests can count them. */
  streams: Set<SseStream>;
  onError: (error: unknown, where: string) => void;
}

function openStorage(context: ApiContext): Opened {
  const opened = context.storage.opened;
  if (!opened || context.storage.status.state !== "open")
    throw new HttpError(
      503,
      `the storage is not open (${context.storage.status.state}); see the status at the top of the page`,
    );
  return opened;
}

/** `/api/conversations/<id>`: a positive integer, or a 400 naming what was given. */
function conversationId(text: string): ConversationId {
  if (!/^[1-9][0-9]{0,15}$/.test(text) || !Number.isSafeInteger(Number(text)))
    throw new HttpError(
      400,
      `${JSON.stringify(text)} is not a conversation id (a positive integer)`,
    );
  return Number(text) as ConversationId;
}

async function conversation(context: ApiContext, id: ConversationId): Promise<Conversation> {
  const { harness } = openStorage(context);
  try {
    return await harness.conversation(id);
  } catch (error) {
    if (error instanceof UnknownRecord)
      throw new HttpError(
        404,
        `conversation ${id} does not exist in this storage (${context.storage.info.title} at ${context.storage.info.location})`,
      );
    throw error;
  }
}

function newStream(
  context: ApiContext,
  request: IncomingMessage,
  response: ServerResponse,
): SseStream {
  const sse = new SseStream(request, response, { ...SECURITY_HEADERS });
  context.streams.add(sse);
  sse.onClose(() => context.streams.delete(sse));
  return sse;
}

async function conversationEvents(
  context: ApiContext,
  id: ConversationId,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const found = await conversation(context, id);
  const { harness, panel } = openStorage(context);
  const sse = newStream(context, request, response);
  streamConversation(
    sse,
    found,
    (listener) => harness.session.subscribeCommits(() => listener()),
    panel,
    context.pacing,
    (error) => context.onError(error, `conversation ${id} stream`),
  );
  // The harness this stream watches goes away when the storage is released or fails: end the
  // stream with the reason; the page reconnects once the storage is open again.
  const unsubscribe = context.storage.subscribe((status) => {
    if (status.state === "open" && context.storage.opened?.harness === harness) return;
    sse.send("status", status);
    sse.close();
  });
  sse.onClose(unsubscribe);
}

/** Which scripted run: `add` (the default) or `approval` (a tool that asks first). */
function agentScript(body: Record<string, unknown>): "add" | "approval" {
  const script = body.script ?? "add";
  if (script !== "add" && script !== "approval")
    throw new HttpError(400, `script must be "add" or "approval", got ${JSON.stringify(script)}`);
  return script;
}

async function runAgent(
  context: ApiContext,
  script: "add" | "approval",
): Promise<{ conversationId: number; submissionId: number }> {
  const refused = await context.storage.allowRun();
  if (refused !== undefined) throw new HttpError(409, `not started: ${refused}`);
  const { harness } = openStorage(context);
  const created = await harness.createConversation();
  const submission = await created.submit({
    type: "input",
    ...(script === "approval"
      ? { content: APPROVAL_QUESTION, model: APPROVAL_MODEL }
      : { content: VIEWER_QUESTION }),
    requestId: VIEWER_REQUEST_ID,
  });
  return { conversationId: created.id, submissionId: submission.id };
}

const KNOWN_PATHS = [
  "/status",
  "/events",
  "/conversations",
  "/conversations/:id",
  "/conversations/:id/storage",
  "/conversations/:id/events",
  "/conversations/:id/approvals",
  "/usage",
  "/storage/open",
  "/storage/stop-waiting",
  "/storage/release",
  "/agent/run",
];

/** Answers `/api/...`; the caller has checked the host, the token and (for POSTs) the origin. */
export async function handleApi(
  context: ApiContext,
  request: IncomingMessage,
  response: ServerResponse,
  path: string,
): Promise<void> {
  const { storage } = context;
  const method = request.method ?? "GET";
  const parts = path.split("/").slice(2); // "", "api", ...
  const route = `${method} /${parts.map((p, i) => (parts[0] === "conversations" && i === 1 ? ":id" : p)).join("/")}`;
  switch (route) {
    case "GET /status":
      return sendJson(response, 200, { storage: storage.info, status: storage.status });
    case "GET /events": {
      context.feed.add(newStream(context, request, response));
      return;
    }
    case "GET /conversations":
      return sendJson(response, 200, await listConversations(openStorage(context).harness));
    case "GET /conversations/:id": {
      const view = await (await conversation(context, conversationId(parts[1] ?? ""))).view();
      return sendJson(response, 200, {
        conversationId: view.conversationId,
        items: view.entries.map(itemView),
        live: liveView(view),
        usage: usageView(view.usage),
      });
    }
    case "GET /conversations/:id/storage": {
      const found = await conversation(context, conversationId(parts[1] ?? ""));
      return sendJson(response, 200, await openStorage(context).panel.read(found.id));
    }
    case "GET /conversations/:id/events":
      return conversationEvents(context, conversationId(parts[1] ?? ""), request, response);
    case "POST /storage/open": {
      const body = await readJsonBody(request);
      if (body.wait === true) storage.waitForLock();
      else await storage.open().catch((error: unknown) => context.onError(error, "open"));
      return sendJson(response, 202, { status: storage.status });
    }
    case "POST /storage/stop-waiting":
      await readJsonBody(request);
      storage.cancelWait();
      return sendJson(response, 200, { status: storage.status });
    case "POST /storage/release":
      await readJsonBody(request);
      await storage.release();
      return sendJson(response, 200, { status: storage.status });
    case "POST /agent/run": {
      const script = agentScript(await readJsonBody(request));
      return sendJson(response, 201, await runAgent(context, script));
    }
    case "POST /conversations/:id/approvals": {
      const id = conversationId(parts[1] ?? "");
      const decision = approvalRequest(await readJsonBody(request));
      const found = await conversation(context, id);
      return sendJson(response, 200, await decide(storage, found, decision));
    }
    case "GET /usage":
      return sendJson(response, 200, await openStorage(context).harness.usage());
    default: {
      const pathOnly = route.slice(route.indexOf(" ") + 1);
      if (KNOWN_PATHS.includes(pathOnly))
        throw new HttpError(405, `${method} is not allowed on ${path}`);
      throw new HttpError(404, `${path} is not a viewer API`);
    }
  }
}
