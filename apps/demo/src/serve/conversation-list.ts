import {
  LiveDoc,
  ROOT_CONVERSATION_ID,
  USER_ENTRY,
  type ConversationRecord,
  type Harness,
} from "@durably/core";
import { scanAll } from "../scan.js";
import { contentText } from "./view-model.js";

export interface ConversationSummary {
  id: number;
  /** A fork: the conversation and entry it was forked from. */
  parent?: { conversationId: number; at: number };
  /** Owned by a task (a subagent's conversation). */
  ownerTaskId?: number;
  /** The first user message, shortened: what the conversation is about. */
  title: string;
  /** An answer is running (or waiting to run) in it. */
  running: boolean;
}

export interface ConversationList {
  conversations: ConversationSummary[];
  /** Conversations left out (the list shows the newest `LIST_LIMIT`). */
  omitted: number;
}

export const LIST_LIMIT = 200;
const TITLE_CHARS = 80;

async function summary(harness: Harness, record: ConversationRecord): Promise<ConversationSummary> {
  const id = record.id;
  const first = await harness.session.read.scanEntries(
    { conversationId: id, order: "ascending" },
    8,
  );
  const user = first.items.find((e) => e.kind === USER_ENTRY && e.conversationId === id);
  const message = user?.model?.[0];
  const text = message?.role === "user" ? contentText(message.content).trim() : "";
  const live = await harness.session.snapshot(LiveDoc, id);
  const out: ConversationSummary = {
    id,
    title: text.length > TITLE_CHARS ? `${text.slice(0, TITLE_CHARS)}…` : text,
    running: live?.run != null,
  };
  if (record.parent)
    out.parent = { conversationId: record.parent.conversationId, at: record.parent.at };
  if (record.owner) out.ownerTaskId = record.owner.taskId;
  return out;
}

/** The storage's conversations, newest first; the root conversation is always there. */
export async function listConversations(harness: Harness): Promise<ConversationList> {
  const records = await scanAll((limit, cursor) =>
    harness.session.read.scanConversations({}, limit, cursor),
  );
  if (!records.some((r) => r.id === ROOT_CONVERSATION_ID))
    records.push({ id: ROOT_CONVERSATION_ID });
  records.sort((a, b) => b.id - a.id);
  const shown = records.slice(0, LIST_LIMIT);
  const conversations: ConversationSummary[] = [];
  for (const record of shown) conversations.push(await summary(harness, record));
  return { conversations, omitted: records.length - shown.length };
}
