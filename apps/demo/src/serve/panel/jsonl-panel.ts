import { open } from "node:fs/promises";
import { join } from "node:path";
import type { ConversationId } from "@durably/core";
import { cell, newest, PANEL_ROWS, type LinesSection, type PanelReader } from "./section.js";

/** A sidecar's newest lines are read from its last bytes only (document files can be long). */
const TAIL_BYTES = 64 * 1024;
/** Sidecar files shown per conversation: the newest documents and tasks. */
const SIDECARS = 8;

type Line = { n: number; text: string };

interface MarkerWrite {
  type?: string;
  id?: number;
  value?: { id?: number; conversationId?: number };
  record?: { id?: number; scope?: { kind?: string; conversationId?: number; taskId?: number } };
}

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/** The last complete lines of a file (its last `TAIL_BYTES`), or undefined when it is gone. */
async function tailLines(file: string): Promise<{ lines: string[]; cut: boolean } | undefined> {
  let handle;
  try {
    handle = await open(file, "r");
  } catch (error) {
    if (errno(error) === "ENOENT") return undefined; // a terminal task's sidecar is removed
    throw error;
  }
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - TAIL_BYTES);
    const buffer = Buffer.alloc(size - start);
    await handle.read(buffer, 0, buffer.length, start);
    let text = buffer.toString("utf8");
    if (start > 0) text = text.slice(text.indexOf("\n") + 1); // drop the partial first line
    const lines = text.split("\n");
    lines.pop(); // the text after the last newline: empty, or a line still being written
    return { lines, cut: start > 0 };
  } finally {
    await handle.close();
  }
}

/**
 * The lines behind a conversation in a JSONL storage: the commit markers of
 * main.jsonl that touch it (read incrementally: only bytes appended since
 * the last read are parsed), then the newest lines of its documents' and
 * live tasks' sidecar files. Reads the files the owner appends to; a line
 * still being written (no newline yet) waits for the next read.
 */
export function jsonlPanel(
  dir: string,
  taskConversation: (taskId: number) => Promise<number | undefined>,
): PanelReader {
  const main = join(dir, "main.jsonl");
  let offset = 0;
  let lineCount = 0;
  const byConversation = new Map<number, { lines: Line[]; count: number }>();
  const docConversation = new Map<number, number>();
  const taskOf = new Map<number, number>();
  let reading: Promise<unknown> = Promise.resolve();

  async function conversationOfTask(id: number): Promise<number | undefined> {
    const known = taskOf.get(id);
    if (known !== undefined) return known;
    const found = await taskConversation(id);
    if (found !== undefined) taskOf.set(id, found);
    return found;
  }

  /** The conversations one marker line of main.jsonl touches (learning its documents and tasks). */
  async function touches(text: string): Promise<Set<number>> {
    const conversations = new Set<number>();
    let parsed: { writes?: MarkerWrite[] };
    try {
      parsed = JSON.parse(text) as { writes?: MarkerWrite[] };
    } catch {
      return conversations; // not for the panel to judge: the storage checked it at open
    }
    for (const w of parsed.writes ?? []) {
      switch (w.type) {
        case "conversation":
          if (typeof w.value?.id === "number") conversations.add(w.value.id);
          break;
        case "entry":
        case "submission":
          if (typeof w.value?.conversationId === "number")
            conversations.add(w.value.conversationId);
          break;
        case "task": {
          const id = w.value?.id ?? w.id;
          if (typeof w.value?.conversationId === "number" && typeof id === "number")
            taskOf.set(id, w.value.conversationId);
          const c = typeof id === "number" ? await conversationOfTask(id) : undefined;
          if (c !== undefined) conversations.add(c);
          break;
        }
        case "document.create":
        case "document.copy": {
          const scope = w.record?.scope;
          const c =
            scope?.kind === "conversation"
              ? scope.conversationId
              : scope?.kind === "task" && typeof scope.taskId === "number"
                ? await conversationOfTask(scope.taskId)
                : undefined;
          if (typeof c === "number" && typeof w.record?.id === "number") {
            docConversation.set(w.record.id, c);
            conversations.add(c);
          }
          break;
        }
        case "document.change":
        case "document.retire": {
          const c = typeof w.id === "number" ? docConversation.get(w.id) : undefined;
          if (c !== undefined) conversations.add(c);
          break;
        }
      }
    }
    return conversations;
  }

  async function catchUp(): Promise<void> {
    const handle = await open(main, "r");
    try {
      const { size } = await handle.stat();
      if (size < offset) {
        // Only recovery at open shortens main.jsonl; start over rather than guess.
        offset = 0;
        lineCount = 0;
        byConversation.clear();
      }
      if (size === offset) return;
      const buffer = Buffer.alloc(size - offset);
      await handle.read(buffer, 0, buffer.length, offset);
      const end = buffer.lastIndexOf(0x0a);
      if (end === -1) return;
      offset += end + 1;
      for (const text of buffer.subarray(0, end).toString("utf8").split("\n")) {
        lineCount += 1;
        for (const c of await touches(text)) {
          let seen = byConversation.get(c);
          if (!seen) byConversation.set(c, (seen = { lines: [], count: 0 }));
          seen.count += 1;
          seen.lines.push({ n: lineCount, text: cell(text) });
          if (seen.lines.length > PANEL_ROWS) seen.lines.shift();
        }
      }
    } finally {
      await handle.close();
    }
  }

  async function sidecars(conversationId: number): Promise<LinesSection[]> {
    const files: string[] = [];
    for (const [doc, c] of docConversation)
      if (c === conversationId) files.push(`doc-${doc}.jsonl`);
    for (const [task, c] of taskOf) if (c === conversationId) files.push(`task-${task}.jsonl`);
    const sections: LinesSection[] = [];
    for (const name of files.slice(-SIDECARS)) {
      const tail = await tailLines(join(dir, name));
      if (tail === undefined) continue;
      const { kept, omitted } = newest(tail.lines);
      sections.push({
        type: "lines",
        title: `${name} (newest lines${tail.cut ? `, from its last ${TAIL_BYTES / 1024} KiB` : ""})`,
        lines: kept.map((text) => ({ text: cell(text) })),
        omitted,
      });
    }
    return sections;
  }

  return {
    async read(conversationId: ConversationId) {
      const turn = reading.then(async () => {
        await catchUp();
        const seen = byConversation.get(conversationId) ?? { lines: [], count: 0 };
        const markers: LinesSection = {
          type: "lines",
          title: `main.jsonl: the commit markers that touch conversation ${conversationId}`,
          lines: [...seen.lines],
          omitted: seen.count - seen.lines.length,
        };
        return {
          summary: `Lines of the files in ${dir}, read as the owner appends them (line numbers count from the top of main.jsonl).`,
          sections: [markers, ...(await sidecars(conversationId))],
        };
      });
      reading = turn.catch(() => undefined);
      return turn;
    },
    close: () => Promise.resolve(),
  };
}
