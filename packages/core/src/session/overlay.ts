import type { PreparedCommit } from "./prepared.js";
import type {
  ConversationRecord,
  EntryRecord,
  SubmissionRecord,
  TaskRecord,
} from "../domain/records.js";

interface Held<T> {
  value: T;
  layer: PreparedCommit;
}

class LayeredTable<T extends { id: number }> {
  private readonly byId = new Map<number, Held<T>>();

  add(records: readonly T[], layer: PreparedCommit): void {
    for (const value of records) this.byId.set(value.id, { value, layer });
  }

  /** Drops the records of a stored layer unless a later layer replaced them. */
  drop(records: readonly T[], layer: PreparedCommit): void {
    for (const value of records)
      if (this.byId.get(value.id)?.layer === layer) this.byId.delete(value.id);
  }

  get(id: number): T | undefined {
    return this.byId.get(id)?.value;
  }

  /** The prepared commit that holds the newest version of this id. */
  layerOf(id: number): PreparedCommit | undefined {
    return this.byId.get(id)?.layer;
  }

  get size(): number {
    return this.byId.size;
  }

  values(): T[] {
    const out: T[] = [];
    for (const held of this.byId.values()) out.push(held.value);
    return out;
  }
}

/**
 * Table records of commits that are prepared but not yet stored: what the
 * next callback must see on top of storage (read-your-writes across the
 * pipeline). Newest layer wins; a layer leaves once storage has it.
 * Lookups are synchronous so a reader checks here first and only then asks
 * storage, which by then holds every layer that already left.
 */
export class Overlay {
  readonly conversations = new LayeredTable<ConversationRecord>();
  readonly entries = new LayeredTable<EntryRecord>();
  readonly tasks = new LayeredTable<TaskRecord>();
  readonly submissions = new LayeredTable<SubmissionRecord>();
  private layers = 0;

  add(layer: PreparedCommit): void {
    this.layers++;
    this.conversations.add(layer.conversations, layer);
    this.entries.add(layer.entries, layer);
    this.tasks.add(layer.tasks, layer);
    this.submissions.add(layer.submissions, layer);
  }

  drop(layer: PreparedCommit): void {
    this.layers--;
    this.conversations.drop(layer.conversations, layer);
    this.entries.drop(layer.entries, layer);
    this.tasks.drop(layer.tasks, layer);
    this.submissions.drop(layer.submissions, layer);
  }

  /** True when no layer is pending (reads go straight to storage). */
  get empty(): boolean {
    return this.layers === 0;
  }
}
