import {
  ROOT_CONVERSATION_ID,
  type ConversationId,
  type ConversationRecord,
  type DocumentScope,
  type Storage,
} from "@durably/core";
import { heading, subheading } from "./render/heading.js";
import type { Output } from "./render/output.js";
import { renderTable, type Table } from "./render/table.js";
import { scanAll } from "./scan.js";

export interface StorageContents {
  conversations: ConversationRecord[];
  entries: string[][];
  documents: string[][];
  tasks: string[][];
}

const json = (value: unknown): string => (value === undefined ? "" : JSON.stringify(value));

function scopeLabel(scope: DocumentScope): string {
  switch (scope.kind) {
    case "session":
      return "session";
    case "conversation":
      return `conversation ${scope.conversationId}`;
    case "task":
      return `task ${scope.taskId}`;
  }
}

/**
 * Reads everything a Durably storage holds through the Storage port alone
 * (scans plus point reads), so it works on any backend, ours or a third
 * party's. The root conversation (id 1) has no record of its own, so its
 * entries and documents are read too.
 */
export async function readContents(storage: Storage): Promise<StorageContents> {
  const conversations = await scanAll((limit, cursor) =>
    storage.scanConversations({}, limit, cursor),
  );
  const conversationIds: ConversationId[] = [
    ROOT_CONVERSATION_ID,
    ...conversations.map((c) => c.id).filter((id) => id !== ROOT_CONVERSATION_ID),
  ];
  const entries: string[][] = [];
  for (const conversationId of conversationIds) {
    const visible = await scanAll((limit, cursor) =>
      storage.scanEntries({ conversationId, order: "ascending" }, limit, cursor),
    );
    // A fork also sees its parent's entries; list each entry once, under its own conversation.
    for (const entry of visible.filter((e) => e.conversationId === conversationId)) {
      const stored = await storage.entry(entry.id);
      entries.push([
        String(entry.id),
        String(entry.conversationId),
        String(stored?.commitSeq ?? "?"),
        entry.kind,
        json(entry.data),
        json(entry.model),
      ]);
    }
  }
  const tasks = await scanAll((limit, cursor) => storage.scanTasks({}, limit, cursor));
  const scopes: DocumentScope[] = [
    { kind: "session" },
    ...conversationIds.map((conversationId) => ({ kind: "conversation" as const, conversationId })),
    ...tasks.map((task) => ({ kind: "task" as const, taskId: task.id })),
  ];
  const documents: string[][] = [];
  for (const scope of scopes) {
    const records = await scanAll((limit, cursor) =>
      storage.scanDocuments({ scope, at: "current" }, limit, cursor),
    );
    for (const record of records) {
      const doc = await storage.document(record.id, "current");
      documents.push([
        String(record.id),
        record.kind,
        record.key ?? "",
        scopeLabel(record.scope),
        String(record.createdAt),
        String(doc?.version ?? ""),
        String(doc?.deltasSinceBase ?? ""),
        json(doc?.value),
      ]);
    }
  }
  return {
    conversations,
    entries,
    documents,
    tasks: tasks.map((task) => [
      String(task.id),
      String(task.conversationId),
      task.kind,
      task.state.status,
      task.background ? "yes" : "no",
      task.owner === undefined ? "" : String(task.owner),
    ]),
  };
}

export function contentTables(contents: StorageContents): { title: string; table: Table }[] {
  return [
    {
      title: "conversations",
      table: {
        columns: [{ header: "id", align: "right" }, { header: "forked from" }, { header: "owner" }],
        rows: contents.conversations.map((c) => [
          String(c.id),
          c.parent ? `conversation ${c.parent.conversationId} at entry ${c.parent.at}` : "",
          c.owner ? `task ${c.owner.taskId} (conversation ${c.owner.conversationId})` : "",
        ]),
      },
    },
    {
      title: "entries",
      table: {
        columns: [
          { header: "id", align: "right" },
          { header: "conversation", align: "right" },
          { header: "seq", align: "right" },
          { header: "kind" },
          { header: "data", maxWidth: 60 },
          { header: "model", maxWidth: 60 },
        ],
        rows: contents.entries,
      },
    },
    {
      title: "documents, current values",
      table: {
        columns: [
          { header: "id", align: "right" },
          { header: "kind" },
          { header: "key" },
          { header: "scope" },
          { header: "created", align: "right" },
          { header: "version", align: "right" },
          { header: "deltas", align: "right" },
          { header: "value", maxWidth: 60 },
        ],
        rows: contents.documents,
      },
    },
    {
      title: "tasks",
      table: {
        columns: [
          { header: "id", align: "right" },
          { header: "conversation", align: "right" },
          { header: "kind" },
          { header: "status" },
          { header: "background" },
          { header: "owner", align: "right" },
        ],
        rows: contents.tasks,
      },
    },
  ];
}

export function printContents(out: Output, title: string, contents: StorageContents): void {
  heading(out, title);
  for (const { title: name, table } of contentTables(contents)) {
    subheading(out, `${name} (${table.rows.length})`);
    if (table.rows.length === 0) out.line(out.style.dim("  (none)"));
    else out.lines(renderTable(table, out.style));
  }
}
