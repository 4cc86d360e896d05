// The viewer page: follows the storage status and the conversation list
// (/api/events), and the chosen conversation (?c=<id>) through its own
// event stream. Everything shown comes from those streams; a reload starts
// again from the server's current state.

import { fill, h } from "./dom.js";
import { renderList, renderPanel, renderStatus } from "./render-side.js";
import { TranscriptView } from "./render-transcript.js";
import { applyChange, applySnapshot, emptyState, usageLine } from "./view-state.js";

const $ = (id) => document.getElementById(id);

const params = new URLSearchParams(location.search);
const selectedText = params.get("c");
const selected =
  selectedText !== null && /^[1-9][0-9]*$/.test(selectedText) ? Number(selectedText) : undefined;

let status = null;
let state = emptyState();
let stream = null;
const transcript = new TranscriptView($("transcript"), $("live"));

function announce(text) {
  $("announcer").textContent = text;
}

function message(text, kind = "alert") {
  const element = $("conversation-message");
  element.className = kind;
  element.textContent = text;
}

async function post(path, body = {}) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    credentials: "same-origin",
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error ?? `${response.status} ${response.statusText}`);
  return data;
}

/**
 * Posts a decision on a waiting tool call. The request id is made once per
 * click and reused if the POST has to be sent again (the connection dropped
 * before the answer came), so the server stores the decision once.
 */
async function decide(toolCallId, decision) {
  const requestId = crypto.randomUUID();
  const path = `/api/conversations/${selected}/approvals`;
  const body = { toolCallId, ...decision, requestId };
  try {
    return await post(path, body);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // the server answered: its message stands
    return post(path, body);
  }
}

function act(promise) {
  promise.catch((error) => {
    fill($("run-message"), error.message);
  });
}

const actions = {
  open: () => act(post("/api/storage/open")),
  wait: () => act(post("/api/storage/open", { wait: true })),
  stopWaiting: () => act(post("/api/storage/stop-waiting")),
  release: () => act(post("/api/storage/release")),
};

function render() {
  const runsHere = status?.state === "open" && status.running === true;
  transcript.render(state, { runsHere, canDecide: runsHere, decide });
  const live = state.live;
  const running = Boolean(live && (live.run || live.generation));
  const asking = (live?.tools ?? []).some((tool) => tool.status === "approval");
  $("conversation-state").textContent = asking
    ? "waiting for your approval"
    : running
      ? "running"
      : "idle";
  fill($("conversation-usage"), state.usage ? usageLine(state.usage.total) : "");
}

let announcedRetry = "";

/** What a change adds that a screen reader user should hear: stored turns, a retry starting. */
function announceChange(change) {
  const said = [];
  for (const item of change.items ?? []) {
    const role = item.messages?.[0]?.role;
    if (role === "assistant") said.push(`Assistant turn stored as entry ${item.entryId}.`);
    if (role === "toolResult") said.push(`Tool result stored as entry ${item.entryId}.`);
  }
  const retry = state.live?.retry;
  const key = retry ? `${retry.taskId}:${retry.attempt}` : "";
  if (key !== "" && key !== announcedRetry)
    said.push(`The model call failed; retrying, attempt ${retry.attempt} of ${retry.maxAttempts}.`);
  announcedRetry = key;
  if (said.length > 0) announce(said.join(" "));
}

function closeStream() {
  stream?.close();
  stream = null;
}

async function whyClosed() {
  // A closed stream: the server stopped, or restarted with a new token (then it answers 401).
  try {
    const response = await fetch("/api/status", { credentials: "same-origin" });
    if (response.status === 401)
      return "This page's access ended: the viewer restarted with a new token. Open the URL it printed.";
    const data = await response.json().catch(() => ({}));
    return data.error ?? `The stream ended (${response.status}).`;
  } catch {
    return "The viewer is not reachable (stopped?). This page shows the state it last received.";
  }
}

async function openConversation(id) {
  closeStream();
  const response = await fetch(`/api/conversations/${id}`, { credentials: "same-origin" });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    message(data.error ?? `Conversation ${id} cannot be shown (${response.status}).`);
    return;
  }
  message("", "");
  state = applySnapshot(state, data);
  render();
  stream = new EventSource(`/api/conversations/${id}/events`);
  stream.addEventListener("snapshot", (event) => {
    state = applySnapshot(state, JSON.parse(event.data));
    render();
  });
  stream.addEventListener("change", (event) => {
    const change = JSON.parse(event.data);
    state = applyChange(state, change);
    render();
    announceChange(change);
  });
  stream.addEventListener("storage", (event) => {
    renderPanel($("storage-summary"), $("storage-sections"), JSON.parse(event.data));
  });
  stream.addEventListener("storage-error", (event) => {
    fill($("storage-summary"), `The panel could not be read: ${JSON.parse(event.data).message}`);
  });
  stream.addEventListener("error", () => {
    if (stream?.readyState === EventSource.CLOSED) {
      closeStream();
      void whyClosed().then((text) => message(text));
    }
  });
}

function onStatus() {
  renderStatus($("status"), status, actions);
  const open = status?.state === "open";
  $("run-agent").disabled = !open;
  $("run-approval").disabled = !open;
  if (open && selected !== undefined && stream !== null) render(); // whether the page may decide
  if (open && selected !== undefined && stream === null) void openConversation(selected);
  if (!open && stream !== null) {
    closeStream();
    message(
      `Not live: the storage is ${status?.state ?? "unavailable"}. The transcript is as it was last received.`,
      "note",
    );
  }
}

function start() {
  $("conversation-heading").textContent =
    selected === undefined ? "No conversation chosen" : `Conversation ${selected}`;
  if (selected === undefined) {
    message(
      selectedText === null
        ? "Choose a conversation from the list, or run the scripted agent to watch one being answered."
        : `${JSON.stringify(selectedText)} is not a conversation id (a positive integer).`,
      selectedText === null ? "note" : "alert",
    );
  } else {
    document.title = `Conversation ${selected} · Durably viewer`;
  }
  renderPanel($("storage-summary"), $("storage-sections"), null);
  const run = (script) => () => {
    fill($("run-message"), "Starting…");
    post("/api/agent/run", { script }).then(
      (started) => location.assign(`/?c=${started.conversationId}`),
      (error) => fill($("run-message"), error.message),
    );
  };
  $("run-agent").addEventListener("click", run("add"));
  $("run-approval").addEventListener("click", run("approval"));

  fetch("/api/status", { credentials: "same-origin" })
    .then((response) => response.json())
    .then((data) => {
      if (data.storage)
        fill(
          $("storage-info"),
          h("strong", {}, data.storage.title),
          ` storage at ${data.storage.location}`,
        );
    })
    .catch(() => undefined);

  const feed = new EventSource("/api/events");
  feed.addEventListener("status", (event) => {
    status = JSON.parse(event.data);
    onStatus();
  });
  feed.addEventListener("usage", (event) => {
    const usage = JSON.parse(event.data);
    fill($("storage-usage"), `Whole storage: ${usageLine(usage.total)}`);
  });
  feed.addEventListener("conversations", (event) => {
    renderList($("conversation-list"), JSON.parse(event.data), selected);
  });
  feed.addEventListener("error", () => {
    if (feed.readyState === EventSource.CLOSED) {
      void whyClosed().then((text) => {
        status = { state: "disconnected", message: text };
        onStatus();
      });
    } else {
      renderStatus(
        $("status"),
        { state: "disconnected", message: "Reconnecting to the viewer…" },
        actions,
      );
    }
  });
  feed.addEventListener("open", () => {
    if (status) onStatus();
  });
}

start();
