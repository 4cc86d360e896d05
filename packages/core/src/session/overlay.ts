import type {
  ConversationRecord,
  EntryRecord,
  SubmissionRecord,
  TaskRecord,
} from "../domain/records.js";

/** The table records one prepared commit wrote (each id at most once per table). */
export interface LayerRecords {
  readonly conversations: readonly ConversationRecord[];
  readonly entries: readonly EntryRecord[];
  readonly tasks: readonly TaskRecord[];
  readonly submissions: readonly SubmissionRecord[];
}

/** What a transaction reads of the overlay: the newest pending record per id. */
export interface OverlayTable<T> {
  get(id: number): T | undefined;
  values(): T[];
}

export interface OverlayView {
  readonly conversations: OverlayTable<ConversationRecord>;
  readonly entries: OverlayTable<EntryRecord>;
  readonly tasks: OverlayTable<TaskRecord>;
  readonly submissions: OverlayTable<SubmissionRecord>;
}

type TableName = keyof LayerRecords;
type RecordOf<N extends TableName> = LayerRecords[N][number];

/**
 * One table's view over the pending layers. A layer holds few records and
 * few layers are pending (one per commit in flight), so lookups scan the
 * layers, newest first, instead of keeping a per-id index that every
 * commit would fill and empty again; a table with nothing pending is
 * skipped at once.
 */
class LayeredTable<N extends TableName, L> {
  /** Records of this table in the pending layers. */
  count = 0;

  constructor(
    private readonly overlay: Overlay<L>,
    private readonly name: N,
  ) {}

  get(id: number): RecordOf<N> | undefined {
    return this.find(id)?.record;
  }

  /** The layer that holds the newest version of this id. */
  layerOf(id: number): L | undefined {
    return this.find(id)?.layer;
  }

  /** The newest version of every pending record, in the order ids first appeared. */
  values(): RecordOf<N>[] {
    if (this.count === 0) return [];
    const newest = new Map<number, RecordOf<N>>();
    for (const layer of this.overlay.pending())
      for (const record of this.overlay.recordsOf(layer)[this.name]) newest.set(record.id, record);
    return [...newest.values()];
  }

  private find(id: number): { record: RecordOf<N>; layer: L } | undefined {
    if (this.count === 0) return undefined;
    const layers = this.overlay.pending();
    for (let i = layers.length - 1; i >= 0; i--) {
      const layer = layers[i] as L;
      const records = this.overlay.recordsOf(layer)[this.name];
      for (let j = 0; j < records.length; j++) {
        const record = records[j] as RecordOf<N>;
        if (record.id === id) return { record, layer };
      }
    }
    return undefined;
  }
}

/**
 * Table records of commits that are prepared but not yet stored: what the
 * next callback must see on top of storage (read-your-writes across the
 * pipeline). Newest layer wins; a layer leaves once storage has it. A layer
 * is whatever object the session tracks a commit by; `recordsOf` gives its
 * records. Lookups are synchronous so a reader checks here first and only
 * then asks storage, which by then holds every layer that already left.
 */
export class Overlay<L> implements OverlayView {
  readonly conversations = new LayeredTable(this, "conversations");
  readonly entries = new LayeredTable(this, "entries");
  readonly tasks = new LayeredTable(this, "tasks");
  readonly submissions = new LayeredTable(this, "submissions");
  /** Pending layers, oldest first (storage stores them in this order). */
  private readonly layers: L[] = [];

  constructor(readonly recordsOf: (layer: L) => LayerRecords) {}

  pending(): readonly L[] {
    return this.layers;
  }

  add(layer: L): void {
    this.layers.push(layer);
    this.count(this.recordsOf(layer), 1);
  }

  drop(layer: L): void {
    const layers = this.layers;
    // Stored in order: the oldest layer, nearly always.
    const index = layers[0] === layer ? 0 : layers.indexOf(layer);
    if (index === -1) return;
    if (index === 0) layers.shift();
    else layers.splice(index, 1);
    this.count(this.recordsOf(layer), -1);
  }

  /** True when no layer is pending (reads go straight to storage). */
  get empty(): boolean {
    return this.layers.length === 0;
  }

  private count(records: LayerRecords, sign: 1 | -1): void {
    this.conversations.count += sign * records.conversations.length;
    this.entries.count += sign * records.entries.length;
    this.tasks.count += sign * records.tasks.length;
    this.submissions.count += sign * records.submissions.length;
  }
}
