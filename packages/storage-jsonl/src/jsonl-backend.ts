import { StoragePoisoned } from "@durably/core";
import {
  IndexedBackend,
  materializeRevisions,
  type BatchPlan,
  type CommitCall,
  type CommitOutcome,
  type ContentWrite,
  type CurrentValue,
  type StoredRevision,
} from "@durably/core/storage";
import { AppendHandles } from "./append-handles.js";
import { isTerminal, serializeCall, writeCall } from "./commit-writer.js";
import { readHistory } from "./document-history.js";
import type { AppendFile, FileLock, FileSystem } from "./file-system.js";
import type { JsonlDocument, JsonlIndex, Placement, RevisionRef } from "./jsonl-index.js";
import { documentFile, taskFile } from "./line-format.js";
import { Mutex } from "./mutex.js";
import { removeSidecar, rewriteDocument, worthRewriting, type ReclaimContext } from "./reclaim.js";
import { SerialQueue } from "./serial-queue.js";

const NO_COPIES: ReadonlyMap<string, CurrentValue> = new Map();

/** Where each write of a batch landed, as the index keeps it: a revision position. */
function positions(seq: number, placements: readonly (Placement | undefined)[]) {
  return (write: ContentWrite): RevisionRef | undefined => {
    const at = placements[write.index];
    const base = write.content.kind === "base";
    return at && { seq, base, offset: at.offset, length: at.length, line: at.line };
  };
}

/**
 * The JSONL backend: the shared in-memory index over append-only files. A
 * commit call plans against the index, appends every sidecar record and then
 * the markers (the publication protocol, `writeCall`), and only then applies
 * the plans to the index. Reclamation of obsolete sidecars runs between
 * commits on the same queue.
 */
export class JsonlBackend extends IndexedBackend<RevisionRef> {
  readonly name: string;
  readonly capabilities = Object.freeze({ persistent: true });
  private readonly queue = new SerialQueue();
  /** Serialises rewrites of current-only sidecars with the history reads that depend on their offsets. */
  private readonly rewriteGate = new Mutex();
  private readonly handles: AppendHandles;
  private poisonCause: unknown;
  private poisoned = false;
  /** Files whose reclamation a commit authorised. */
  private readonly reclaimable = new Set<string>();
  /** The values of the copies at a seq of the call being planned, read ahead (`valueAt`). */
  private copySources: ReadonlyMap<string, CurrentValue> = NO_COPIES;

  constructor(
    private readonly fs: FileSystem,
    readonly directory: string,
    private readonly fsync: boolean,
    private readonly lock: FileLock,
    private readonly main: AppendFile,
    protected override readonly index: JsonlIndex,
    maxOpenFiles: number,
  ) {
    super(index);
    this.name = `JSONL storage ${directory}`;
    this.handles = new AppendHandles(fs, directory, maxOpenFiles);
  }

  private get reclaimContext(): ReclaimContext {
    const { fs, directory, index: state, handles, fsync } = this;
    return { fs, directory, state, handles, fsync };
  }

  failure(): StoragePoisoned | undefined {
    return this.poisoned ? this.poisonError() : undefined;
  }

  private poisonError(): StoragePoisoned {
    return new StoragePoisoned(
      `JSONL storage ${this.directory} saw an uncertain write failure and accepts no more calls; close and reopen it to recover the confirmed state`,
      { cause: this.poisonCause },
    );
  }

  private poison(cause: unknown): StoragePoisoned {
    if (!this.poisoned) {
      this.poisoned = true;
      this.poisonCause = cause;
    }
    return this.poisonError();
  }

  commit(call: CommitCall): Promise<CommitOutcome> {
    const result = this.queue.run(() => this.commitNow(call));
    void result.then(
      () => this.scheduleReclaim(),
      () => undefined,
    );
    return result;
  }

  private async commitNow(call: CommitCall): Promise<CommitOutcome> {
    if (this.poisoned) throw this.poisonError();
    const state = this.index;
    this.copySources = await this.readCopySources(call);
    const plans = call.plan(this.planView(), state.lastSeq + 1);
    this.copySources = NO_COPIES;
    if (plans.length === 0) return { stored: 0 };
    const serialized = serializeCall(state, plans);
    try {
      await writeCall(this.fs, this.directory, this.handles, this.main, serialized, this.fsync);
      await this.handles.trim();
    } catch (error) {
      throw this.poison(error);
    }
    // Publish: the markers are in main.jsonl.
    for (const [file, chunk] of serialized.sidecars) state.files.set(file, chunk.extent);
    plans.forEach((plan, i) => {
      state.apply(plan, positions(plan.seq, serialized.placements[i] ?? []));
      this.noteReclaimable(plan);
    });
    state.persistedHighWater = serialized.persistedHighWater;
    return { stored: plans.length };
  }

  /**
   * The values copies at a seq will ask the planner's view for, read from
   * the sidecars first (the view answers synchronously).
   */
  private async readCopySources(call: CommitCall): Promise<ReadonlyMap<string, CurrentValue>> {
    let values: Map<string, CurrentValue> | undefined;
    for (const batch of call.batches)
      for (const write of batch) {
        if (write.type !== "document.copy" || write.source.at === "current") continue;
        const { id, at } = write.source;
        // The index leaves out what is not live there or not kept: the planner refuses those.
        const snapshot = await this.document(id, at);
        const revisions = snapshot?.revisions;
        const value =
          snapshot?.value ?? (revisions && materializeRevisions(id, revisions, snapshot?.where));
        if (value !== undefined) (values ??= new Map()).set(`${id}@${at}`, value);
      }
    return values ?? NO_COPIES;
  }

  protected valueAt(id: number, at: number): CurrentValue {
    const value = this.copySources.get(`${id}@${at}`);
    if (value === undefined)
      throw new Error(`JSONL storage: the value of document ${id} at seq ${at} was not read ahead`);
    return value;
  }

  protected history(
    doc: JsonlDocument,
    at: number,
  ): Promise<{ revisions: StoredRevision[]; where: string }> {
    // Only current-only files are ever rewritten, so only their history reads wait for rewrites.
    if (doc.currentOnly)
      return this.rewriteGate.lock(() => readHistory(this.fs, this.directory, doc, at));
    return readHistory(this.fs, this.directory, doc, at);
  }

  private noteReclaimable(plan: BatchPlan): void {
    for (const write of plan.writes) {
      if (write.type === "task" && isTerminal(write.value))
        this.reclaimable.add(taskFile(write.value.id));
      else if (write.type === "document.change" && write.content.kind === "base")
        this.reclaimable.add(`doc:${write.id}`);
      else if (write.type === "document.retire") this.reclaimable.add(`doc:${write.id}`);
    }
  }

  private scheduleReclaim(): void {
    if (this.reclaimable.size === 0 || this.poisoned) return;
    void this.queue.run(() => this.reclaim());
  }

  /** Runs the reclamation earlier commits authorised; their markers are already in main.jsonl (and flushed with fsync). */
  private async reclaim(): Promise<void> {
    if (this.poisoned || this.reclaimable.size === 0) return;
    const pending = [...this.reclaimable];
    this.reclaimable.clear();
    try {
      for (const item of pending) {
        if (!item.startsWith("doc:")) {
          const id = Number(/^task-([0-9]+)\.jsonl$/.exec(item)?.[1]);
          const task = this.index.tasks.get(id);
          if (task !== undefined && isTerminal(task))
            await removeSidecar(this.reclaimContext, item);
          continue;
        }
        const doc = this.index.documents.get(Number(item.slice(4)));
        if (doc === undefined || !doc.currentOnly) continue;
        if (doc.record.retiredAt !== undefined)
          await removeSidecar(this.reclaimContext, documentFile(doc.record.id));
        else if (worthRewriting(this.index, doc))
          await this.rewriteGate.lock(() => rewriteDocument(this.reclaimContext, doc));
      }
    } catch (error) {
      this.poison(error);
    }
  }

  /** Reclaims what a crash left unreclaimed (open runs it once). */
  async reclaimAfterOpen(): Promise<void> {
    for (const doc of this.index.documents.values())
      if (doc.currentOnly) this.reclaimable.add(`doc:${doc.record.id}`);
    await this.queue.run(() => this.reclaim());
    if (this.poisoned) throw this.poisonError();
  }

  /** Runs the pending reclamation, closes every file and releases the lock. */
  async close(): Promise<void> {
    await this.queue.run(() => this.reclaim());
    try {
      await this.handles.closeAll();
      await this.main.close();
    } finally {
      await this.lock.release();
    }
  }
}
