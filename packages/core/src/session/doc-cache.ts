import type { DocumentId, Seq } from "../domain/ids.js";
import type {
  CallOptions,
  DocumentAddress,
  MaterializedDocument,
  Storage,
} from "../storage/port.js";
import { deepFreeze } from "./freeze.js";
import type { DocChange, DocIncarnation, DocState } from "./prepared.js";
import type { DocValue } from "./tokens.js";

interface PendingState {
  /** The object the session tracks the commit by. */
  readonly layer: object;
  readonly change: DocChange;
  /** Visible to snapshots and watchers (stored, or deferred and published). */
  published: boolean;
}

/** Everything the session knows about one document address. */
export class DocSlot {
  /** What storage holds ("current"); `undefined` until loaded. */
  stored: DocState | undefined = undefined;
  /** States of prepared commits not yet stored, oldest first. */
  readonly pending: PendingState[] = [];
  /** Bumped whenever `stored` changes through adoption, so a load that raced with it is retried. */
  generation = 0;
  /** Used since the eviction scan last passed it (a second chance instead of reordering on every use). */
  used = true;

  constructor(
    readonly key: string,
    readonly address: DocumentAddress,
  ) {}
}

function pendingIndex(slot: DocSlot, layer: object): number {
  const pending = slot.pending;
  for (let i = 0; i < pending.length; i++)
    if ((pending[i] as PendingState).layer === layer) return i;
  return -1;
}

export function incarnationFrom(doc: MaterializedDocument): DocIncarnation {
  const { record } = doc;
  return {
    id: record.id,
    record: {
      id: record.id,
      kind: record.kind,
      scope: record.scope,
      ...(record.key !== undefined ? { key: record.key } : {}),
      ...(record.history !== undefined ? { history: record.history } : {}),
      ...(record.fork !== undefined ? { fork: record.fork } : {}),
    },
    createdAt: record.createdAt,
    version: doc.version,
    value: deepFreeze(doc.value) as DocValue,
    deltasSinceBase: doc.deltasSinceBase,
  };
}

/**
 * The session's document states by address: the stored value (loaded once,
 * then kept current by adopting stored commits, since this session is the
 * only writer) plus the states of prepared commits. Slots without pending
 * states are evicted least recently used beyond `capacity`.
 */
export class DocCache {
  private readonly slots = new Map<string, DocSlot>();

  constructor(
    private readonly storage: Storage,
    private readonly capacity = 4096,
    private readonly isWatched: (key: string) => boolean = () => false,
  ) {}

  /** The slot at `key` if the session has one, marked used. */
  touch(key: string): DocSlot | undefined {
    const slot = this.slots.get(key);
    if (slot) slot.used = true;
    return slot;
  }

  slot(key: string, address: DocumentAddress): DocSlot {
    const found = this.touch(key);
    if (found) return found;
    const slot = new DocSlot(key, address);
    this.slots.set(key, slot);
    if (this.slots.size > this.capacity) this.evict();
    return slot;
  }

  peek(key: string): DocSlot | undefined {
    return this.slots.get(key);
  }

  /** The stored state, read from storage the first time. */
  async stored(slot: DocSlot, options?: CallOptions): Promise<DocState> {
    for (;;) {
      if (slot.stored !== undefined) return slot.stored;
      const generation = slot.generation;
      const record = await this.storage.findDocument(slot.address, "current", options);
      const doc = record ? await this.storage.document(record.id, "current", options) : undefined;
      if (slot.generation !== generation || slot.stored !== undefined) continue;
      slot.stored = doc ? incarnationFrom(doc) : null;
      return slot.stored;
    }
  }

  /** The newest state when the session knows it without asking storage; `undefined` when it must ask. */
  preparedNow(slot: DocSlot): DocState | undefined {
    const last = slot.pending[slot.pending.length - 1];
    return last ? last.change.state : slot.stored;
  }

  /** The newest state: what the next commit callback sees. */
  async prepared(slot: DocSlot, options?: CallOptions): Promise<DocState> {
    const last = slot.pending[slot.pending.length - 1];
    if (last) return last.change.state;
    return this.stored(slot, options);
  }

  /** What readers and watchers may see: stored, or deferred and already published. */
  async published(slot: DocSlot, options?: CallOptions): Promise<DocState> {
    for (let i = slot.pending.length - 1; i >= 0; i--) {
      const entry = slot.pending[i] as PendingState;
      if (entry.published) return entry.change.state;
    }
    return this.stored(slot, options);
  }

  /**
   * Records a prepared commit's change at an address. `basedOn` is the state
   * the commit saw before it; it becomes the stored state when the slot was
   * evicted (or never loaded) meanwhile, which is exact because only the
   * commit line creates pending states.
   */
  push(layer: object, change: DocChange): void {
    const slot = this.slot(change.addressKey, change.address);
    if (slot.stored === undefined && slot.pending.length === 0) slot.stored = change.basedOn;
    slot.pending.push({ layer, change, published: false });
  }

  markPublished(layer: object, changes: readonly DocChange[]): void {
    for (let i = 0; i < changes.length; i++) {
      const change = changes[i] as DocChange;
      const slot = this.slots.get(change.addressKey);
      if (!slot) continue;
      const index = pendingIndex(slot, layer);
      if (index !== -1) (slot.pending[index] as PendingState).published = true;
    }
  }

  /** The layer is stored at `seq`: its states become the stored ones. */
  adopt(layer: object, changes: readonly DocChange[], seq: Seq): void {
    for (let i = 0; i < changes.length; i++) {
      const change = changes[i] as DocChange;
      const slot = this.slots.get(change.addressKey);
      if (!slot) continue;
      const index = pendingIndex(slot, layer);
      if (index === -1) continue;
      // Layers are stored in order, so this is the oldest pending state.
      if (index === 0) slot.pending.shift();
      else slot.pending.splice(0, index + 1);
      const state = change.state;
      let stamped: DocState = state;
      if (state !== null && state.createdAt === undefined) {
        const previous = slot.stored;
        const createdAt = previous && previous.id === state.id ? previous.createdAt : seq;
        stamped = { ...state, createdAt };
      }
      slot.stored = stamped;
      slot.generation++;
    }
  }

  /** Forgets a layer that will never be stored (the session failed). */
  discard(layer: object, changes: readonly DocChange[]): void {
    for (const change of changes) {
      const slot = this.slots.get(change.addressKey);
      if (!slot) continue;
      const index = pendingIndex(slot, layer);
      if (index !== -1) slot.pending.splice(index, 1);
    }
  }

  /** Pending states per address, newest per address, for listing documents of a scope (rare: forks, tasks ending). */
  pendingStates(): Map<string, { slot: DocSlot; state: DocState }> {
    const out = new Map<string, { slot: DocSlot; state: DocState }>();
    for (const slot of this.slots.values()) {
      const last = slot.pending[slot.pending.length - 1];
      if (last) out.set(slot.key, { slot, state: last.change.state });
    }
    return out;
  }

  /** Id of the incarnation a slot currently refers to, if any. */
  static idOf(state: DocState | undefined): DocumentId | undefined {
    return state ? state.id : undefined;
  }

  /**
   * Drops slots beyond `capacity`, oldest first, sparing those with pending
   * states or watchers. A slot used since the scan last passed it gets a
   * second chance (the CLOCK approximation of least recently used: a use
   * only sets a flag, it does not reorder the map). The second pass finds
   * every flag cleared, so the bound holds after each call.
   */
  private evict(): void {
    for (let pass = 0; pass < 2; pass++) {
      for (const [key, slot] of this.slots) {
        if (this.slots.size <= this.capacity) return;
        if (slot.pending.length > 0 || this.isWatched(key)) continue;
        if (slot.used) slot.used = false;
        else this.slots.delete(key);
      }
    }
  }
}
