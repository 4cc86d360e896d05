import type {
  ConversationRecord,
  EntryRecord,
  SubmissionRecord,
  TaskRecord,
} from "../domain/records.js";

/** The table records one prepared commit wrote. */
export interface LayerRecords {
  readonly conversations: readonly ConversationRecord[];
  readonly entries: readonly EntryRecord[];
  readonly tasks: readonly TaskRecord[];
  readonly submissions: readonly SubmissionRecord[];
}

interface Held<T, L> {
  value: T;
  layer: L;
}

class LayeredTable<T extends { id: number }, L> {
  private readonly byId = new Map<number, Held<T, L>>();

  add(records: readonly T[], layer: L): void {
    for (let i = 0; i < records.length; i++) {
      const value = records[i] as T;
      this.byId.set(value.id, { value, layer });
    }
  }

  /** Drops the records of a stored layer unless a later layer replaced them. */
  drop(records: readonly T[], layer: L): void {
    for (let i = 0; i < records.length; i++) {
      const id = (records[i] as T).id;
      if (this.byId.get(id)?.layer === layer) this.byId.delete(id);
    }
  }

  get(id: number): T | undefined {
    return this.byId.get(id)?.value;
  }

  /** The layer that holds the newest version of this id. */
  layerOf(id: number): L | undefined {
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
 * pipeline). Newest layer wins; a layer leaves once storage has it. A layer
 * is whatever object the session tracks a commit by.
 * Lookups are synchronous so a reader checks here first and only then asks
 * storage, which by then holds every layer that already left.
 */
export class Overlay<L = object> {
  readonly conversations = new LayeredTable<ConversationRecord, L>();
  readonly entries = new LayeredTable<EntryRecord, L>();
  readonly tasks = new LayeredTable<TaskRecord, L>();
  readonly submissions = new LayeredTable<SubmissionRecord, L>();
  private layers = 0;

  add(records: LayerRecords, layer: L): void {
    this.layers++;
    if (records.conversations.length > 0) this.conversations.add(records.conversations, layer);
    if (records.entries.length > 0) this.entries.add(records.entries, layer);
    if (records.tasks.length > 0) this.tasks.add(records.tasks, layer);
    if (records.submissions.length > 0) this.submissions.add(records.submissions, layer);
  }

  drop(records: LayerRecords, layer: L): void {
    this.layers--;
    if (records.conversations.length > 0) this.conversations.drop(records.conversations, layer);
    if (records.entries.length > 0) this.entries.drop(records.entries, layer);
    if (records.tasks.length > 0) this.tasks.drop(records.tasks, layer);
    if (records.submissions.length > 0) this.submissions.drop(records.submissions, layer);
  }

  /** True when no layer is pending (reads go straight to storage). */
  get empty(): boolean {
    return this.layers === 0;
  }
}
