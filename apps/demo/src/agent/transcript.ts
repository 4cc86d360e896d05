import { contentText, type EntryRecord, type Message } from "@durably/core";

/** One message as the transcript table shows it. */
function describeMessage(message: Message): string {
  switch (message.role) {
    case "user":
      return JSON.stringify(contentText(message.content));
    case "assistant":
      return message.content
        .map((part) =>
          part.type === "text"
            ? JSON.stringify(part.text)
            : part.type === "reasoning"
              ? `(thinking ${JSON.stringify(part.text)})`
              : `call ${part.name}(${JSON.stringify(part.arguments)})`,
        )
        .join(" + ");
    case "toolResult":
      return `${message.toolName} → ${JSON.stringify(contentText(message.content))}${message.isError ? " (error)" : ""}`;
  }
}

/** Rows of a transcript table: entry id, kind, what the model sees. */
export function transcriptRows(entries: readonly EntryRecord[]): string[][] {
  return entries.map((entry) => [
    String(entry.id),
    entry.kind,
    (entry.model ?? []).map(describeMessage).join("; "),
  ]);
}

export const TRANSCRIPT_COLUMNS = [
  { header: "entry", align: "right" as const },
  { header: "kind" },
  { header: "message", maxWidth: 60 },
];

/** Kinds in order: what the claims compare against. */
export const kinds = (entries: readonly EntryRecord[]): string =>
  entries.map((e) => e.kind).join(", ");

/** The run's expected shape: question, tool call, tool result, answer. */
export const EXPECTED_KINDS =
  "durably.user, durably.assistant, durably.tool-result, durably.assistant";

export function toolResultOf(entries: readonly EntryRecord[]): Message | undefined {
  return entries.find((e) => e.kind === "durably.tool-result")?.model?.[0];
}

export function answerText(entry: EntryRecord | undefined): string | undefined {
  const message = entry?.model?.[0];
  if (message?.role !== "assistant") return undefined;
  return message.content.map((p) => (p.type === "text" ? p.text : "")).join("");
}
