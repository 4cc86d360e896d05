import type { DocumentAddress } from "./port.js";
import { addressKey } from "./lifetimes.js";
import type { CurrentValue, PlanDocument, PlanView } from "./plan-types.js";

interface LayerDocument extends PlanDocument {
  /** Set once content was written in this layer (or the document was created here). */
  current: CurrentValue | undefined;
}

/**
 * The stored state as a batch sees it: a backend's view plus the effects of
 * the writes planned before (earlier writes of the batch, earlier batches of
 * the call). Nothing is applied to the backend while a call is planned, so
 * this layer is what lets a later write see an earlier one.
 */
export class PlanLayer implements PlanView {
  private readonly conversations = new Set<number>();
  private readonly entries = new Set<number>();
  private readonly documents = new Map<number, LayerDocument>();
  /** Address key to the incarnation last created there in this layer. */
  private readonly addresses = new Map<string, number>();

  constructor(private readonly below: PlanView) {}

  get lastSeq(): number {
    return this.below.lastSeq;
  }

  hasConversation(id: number): boolean {
    return this.conversations.has(id) || this.below.hasConversation(id);
  }

  hasEntry(id: number): boolean {
    return this.entries.has(id) || this.below.hasEntry(id);
  }

  document(id: number): PlanDocument | undefined {
    return this.documents.get(id) ?? this.below.document(id);
  }

  current(id: number): CurrentValue {
    return this.documents.get(id)?.current ?? this.below.current(id);
  }

  liveAt(address: DocumentAddress): number | undefined {
    const key = addressKey(address);
    const created = this.addresses.get(key);
    const id = created ?? this.below.liveAt(address);
    if (id === undefined) return undefined;
    return this.documents.get(id)?.retiredAt === undefined ? id : undefined;
  }

  valueAt(id: number, at: number): CurrentValue {
    return this.below.valueAt(id, at);
  }

  addConversation(id: number): void {
    this.conversations.add(id);
  }

  addEntry(id: number): void {
    this.entries.add(id);
  }

  createDocument(
    id: number,
    address: DocumentAddress,
    createdAt: number,
    currentOnly: boolean,
    current: CurrentValue,
  ): void {
    this.documents.set(id, {
      createdAt,
      retiredAt: undefined,
      currentOnly,
      newestBaseSeq: createdAt,
      current,
    });
    this.addresses.set(addressKey(address), id);
  }

  changeDocument(
    id: number,
    doc: PlanDocument,
    current: CurrentValue,
    newestBaseSeq: number,
  ): void {
    const own = this.documents.get(id);
    if (own !== undefined) {
      own.current = current;
      own.newestBaseSeq = newestBaseSeq;
    } else this.documents.set(id, { ...doc, current, newestBaseSeq });
  }

  retireDocument(id: number, doc: PlanDocument, seq: number): void {
    const own = this.documents.get(id);
    if (own !== undefined) {
      own.retiredAt = seq;
      own.current = undefined;
    } else this.documents.set(id, { ...doc, retiredAt: seq, current: undefined });
  }
}
