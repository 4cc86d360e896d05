import type { Cursor, Session, Transaction } from "@durably/core";
import type { ThreadAddress } from "./config.js";
import {
  ChannelDoc,
  IndexDoc,
  SaverDoc,
  ThreadDoc,
  WritesDoc,
  asConversation,
  type IndexState,
  type ThreadState,
} from "./documents.js";
import { THREAD_ENTRY } from "./entry-format.js";
import { CheckpointDataCorrupted } from "./errors.js";
import { ownValue } from "./own-keys.js";

/*
 * Threads and namespaces: each (thread, checkpoint namespace) pair is one
 * Durably conversation holding its checkpoints as entries. The thread's
 * document maps namespaces to conversations; a registry conversation lists
 * every thread once per incarnation, so `list` without a thread id can find
 * them all without a scan of the whole storage.
 */

const PAGE = 256;

/** The conversation of a namespace, as stored (undefined when the thread or namespace has none). */
export async function conversationOf(
  session: Session,
  address: ThreadAddress,
): Promise<number | undefined> {
  const thread = await session.snapshot(ThreadDoc, null, address.threadId);
  const id = thread ? ownValue(thread.namespaces, address.ns) : undefined;
  return typeof id === "number" ? id : undefined;
}

/**
 * Inside a commit: the namespace's conversation, created (with its index
 * document, and the thread's registration when the thread is new) if there is
 * none. Creating writes table records, so call it after the commit's reads.
 */
export async function ensureNamespace(
  tx: Transaction,
  thread: ThreadState,
  address: ThreadAddress,
): Promise<number> {
  const existing = ownValue(thread.namespaces, address.ns);
  if (existing !== undefined) return existing;
  if (Object.keys(thread.namespaces).length === 0) await registerThread(tx, address.threadId);
  const conversation = await tx.createConversation({ ownership: { kind: "ownerless" } });
  thread.namespaces[address.ns] = conversation.id;
  const index = await tx.doc(IndexDoc, conversation.id);
  index.thread = address.threadId;
  index.ns = address.ns;
  return conversation.id;
}

async function registerThread(tx: Transaction, threadId: string): Promise<void> {
  const saver = await tx.doc(SaverDoc, null);
  if (saver.registry === 0)
    saver.registry = (await tx.createConversation({ ownership: { kind: "ownerless" } })).id;
  await tx.appendEntry(asConversation(saver.registry), {
    kind: THREAD_ENTRY,
    data: { thread: threadId },
  });
}

/** Every live thread id, each once, in the order threads were first written. */
export async function* allThreads(session: Session): AsyncGenerator<string> {
  const saver = await session.snapshot(SaverDoc, null);
  if (!saver || saver.registry === 0) return;
  const seen = new Set<string>();
  let cursor: Cursor | undefined;
  do {
    const page = await session.read.scanEntries(
      { conversationId: asConversation(saver.registry), order: "ascending" },
      PAGE,
      cursor,
    );
    for (const entry of page.items) {
      const data = entry.data as { thread?: unknown } | undefined;
      if (entry.kind !== THREAD_ENTRY || typeof data?.thread !== "string")
        throw new CheckpointDataCorrupted(
          `thread registry: conversation ${saver.registry} entry ${entry.id} is not a thread registration`,
        );
      if (seen.has(data.thread)) continue;
      seen.add(data.thread);
      yield data.thread;
    }
    cursor = page.next;
  } while (cursor !== undefined);
}

/** The thread's namespaces with their conversations (empty when the thread has none). */
export async function namespacesOf(
  session: Session,
  threadId: string,
): Promise<{ ns: string; conversationId: number }[]> {
  const thread = await session.snapshot(ThreadDoc, null, threadId);
  if (!thread) return [];
  return Object.entries(thread.namespaces).map(([ns, conversationId]) => ({ ns, conversationId }));
}

/** The namespace's checkpoint index as stored, or undefined. */
export function indexOf(session: Session, conversationId: number): Promise<IndexState | undefined> {
  return session.snapshot(IndexDoc, asConversation(conversationId));
}

/**
 * Retires every document of the thread in one commit: its namespace map,
 * each namespace's index, channel documents and pending-write documents. The
 * entries stay in storage (Durably entries are immutable) but nothing reaches
 * them any more; writing the thread id again starts a new, empty thread.
 */
export async function retireThread(tx: Transaction, threadId: string): Promise<void> {
  const thread = await tx.doc(ThreadDoc, null, threadId, undefined);
  for (const conversationId of Object.values(thread.namespaces)) {
    const conv = asConversation(conversationId);
    const index = await tx.doc(IndexDoc, conv);
    for (const page of index.checkpoints)
      for (const [checkpointId] of page) await tx.retireDoc(WritesDoc, conv, checkpointId);
    for (const channel of index.channels) await tx.retireDoc(ChannelDoc, conv, channel);
    await tx.retireDoc(IndexDoc, conv);
  }
  await tx.retireDoc(ThreadDoc, null, threadId);
}
