import type { ConversationId, Cursor, EntryRecord, Storage, TaskRecord } from "@durably/core";

export class HarnessCheckFailed extends Error {
  override readonly name = "HarnessCheckFailed";
}

export function check(condition: boolean, message: () => string): asserts condition {
  if (!condition) throw new HarnessCheckFailed(message());
}

export async function storedEntries(
  storage: Storage,
  conversationId: ConversationId,
): Promise<EntryRecord[]> {
  const out: EntryRecord[] = [];
  let cursor: Cursor | undefined;
  do {
    const page = await storage.scanEntries({ conversationId, order: "ascending" }, 256, cursor);
    out.push(...page.items);
    cursor = page.next;
  } while (cursor !== undefined);
  return out;
}

export async function storedTasks(
  storage: Storage,
  conversationId: ConversationId,
  kind: string,
): Promise<TaskRecord[]> {
  const out: TaskRecord[] = [];
  let cursor: Cursor | undefined;
  do {
    const page = await storage.scanTasks({ conversationId, kind }, 256, cursor);
    out.push(...page.items);
    cursor = page.next;
  } while (cursor !== undefined);
  return out;
}

/** The stored value of a conversation document, read from storage itself. */
export async function storedDoc(
  storage: Storage,
  kind: string,
  conversationId: ConversationId,
): Promise<unknown> {
  const record = await storage.findDocument(
    { kind, scope: { kind: "conversation", conversationId } },
    "current",
  );
  if (!record) return undefined;
  return (await storage.document(record.id, "current"))?.value;
}

/**
 * The harness's atomicity promise as stored: every tool call in an
 * assistant entry has its tool task or its result, and no call has two
 * results. Returns the calls found, in order.
 */
export async function checkTranscript(
  storage: Storage,
  conversationId: ConversationId,
  when: string,
): Promise<string[]> {
  const entries = await storedEntries(storage, conversationId);
  const tasks = await storedTasks(storage, conversationId, "durably.tool");
  const taskCalls = new Set(tasks.map((t) => (t.input as { toolCallId: string }).toolCallId));
  const results = new Map<string, number>();
  for (const entry of entries)
    for (const m of entry.model ?? [])
      if (m.role === "toolResult") results.set(m.toolCallId, (results.get(m.toolCallId) ?? 0) + 1);
  const calls: string[] = [];
  for (const entry of entries) {
    if (entry.kind !== "durably.assistant") continue;
    for (const m of entry.model ?? []) {
      if (m.role !== "assistant") continue;
      for (const part of m.content) {
        if (part.type !== "toolCall") continue;
        calls.push(part.id);
        check(
          taskCalls.has(part.id) || results.has(part.id),
          () =>
            `${when}: assistant entry ${entry.id} calls ${part.name} (${part.id}) but no tool task or result exists for it`,
        );
      }
    }
  }
  for (const [id, count] of results)
    check(count === 1, () => `${when}: tool call ${id} has ${count} results, expected 1`);
  return calls;
}

/** The stored value of a session document, read from storage itself. */
export async function storedSessionDoc(storage: Storage, kind: string): Promise<unknown> {
  const record = await storage.findDocument({ kind, scope: { kind: "session" } }, "current");
  if (!record) return undefined;
  return (await storage.document(record.id, "current"))?.value;
}
