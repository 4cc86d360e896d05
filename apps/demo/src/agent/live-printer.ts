import type { ConversationView, EntryRecord, LiveState, ViewOps } from "@durably/core";
import { contentText } from "@durably/core";
import type { Style } from "../render/style.js";

/** Where the transcript goes: raw writes, so streamed text appears as it arrives. */
export type Write = (text: string) => void;

/**
 * Prints a conversation as it happens, from `conversation.watch` frames:
 * stored entries once each (the question, tool calls, tool results,
 * answers), the answer's text as it streams (from `durably.live`), and
 * retry waits. Text already shown while streaming is not printed again
 * when its entry is stored.
 */
export class TranscriptPrinter {
  private readonly printed = new Set<number>();
  /** Characters of the streaming answer already written. */
  private streamed = 0;
  private retryShown: string | undefined;

  constructor(
    private readonly write: Write,
    private readonly style: Style,
    private readonly now: () => number = Date.now,
  ) {}

  readonly frame = (view: ConversationView, ops: ViewOps): void => {
    const entries = ops.type === "full" ? view.entries : ops.entries;
    for (const entry of entries) this.entry(entry);
    this.live(view.live);
  };

  private line(text: string): void {
    if (this.streamed > 0) this.write("\n");
    this.streamed = 0;
    this.write(`${text}\n`);
  }

  private entry(entry: EntryRecord): void {
    if (this.printed.has(entry.id)) return;
    this.printed.add(entry.id);
    for (const message of entry.model ?? []) {
      if (message.role === "user")
        this.line(this.style.bold(`you: ${contentText(message.content)}`));
      else if (message.role === "toolResult")
        this.line(
          this.style.dim(
            `  ← ${message.toolName}: ${contentText(message.content)}${message.isError ? " (error)" : ""}`,
          ),
        );
      else {
        const text = message.content.map((p) => (p.type === "text" ? p.text : "")).join("");
        // The streamed part was written already; write the rest (all of it after a restart).
        if (this.streamed === 0) {
          if (text !== "") this.write(`${this.style.cyan("assistant:")} ${text}`);
          this.streamed = text.length > 0 ? text.length : 0;
        } else if (text.length > this.streamed) {
          this.write(text.slice(this.streamed));
          this.streamed = text.length;
        }
        let calls = 0;
        for (const part of message.content)
          if (part.type === "toolCall") {
            calls++;
            this.line(this.style.dim(`  → ${part.name}(${JSON.stringify(part.arguments)})`));
          }
        if (message.stopReason === "error" || message.stopReason === "aborted")
          this.line(this.style.yellow(`  (this turn ended: ${message.stopReason})`));
        else if (calls === 0) this.line(""); // an answer: end its line, then a blank one
      }
    }
  }

  private live(live: Readonly<LiveState>): void {
    const retry = live.retry;
    if (retry) {
      const key = `${retry.taskId}:${retry.attempt}`;
      if (key !== this.retryShown) {
        this.retryShown = key;
        const seconds = Math.max(0, Math.round((retry.retryAt - this.now()) / 1000));
        this.line(
          this.style.yellow(
            `  retrying: attempt ${retry.attempt} of ${retry.maxAttempts} in ${seconds} s (${retry.error.message})`,
          ),
        );
      }
    }
    const text = live.generation?.text ?? "";
    if (text.length < this.streamed) {
      // A new model call (the next round, or a rerun after a restart or a retry).
      this.line("");
    }
    if (text.length > this.streamed) {
      if (this.streamed === 0) this.write(`${this.style.cyan("assistant:")} `);
      this.write(text.slice(this.streamed));
      this.streamed = text.length;
    }
  }
}
