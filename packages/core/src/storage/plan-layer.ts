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
  // Made on first use: most calls write one or two kinds of record.
  private conversations: Set<number> | undefined;
  private entries: Set<number> | undefined;
  private documents: Map<number, LayerDocument> | undefined;
  /** Address key to the incarnation last created there in this layer. */
  private addresses: Map<string, number> | undefined;

  constructor(private readonly below: PlanView) {}

  get lastSeq(): number {
    return this.below.lastSeq;
  }

  hasConversation(id: number): boolean {
    return this.conversations?.has(id) === true || this.below.hasConversation(id);
  }

  hasEntry(id: number): boolean {
    return this.entries?.has(id) === true || this.below.hasEntry(id);
  }

  document(id: number): PlanDocument | undefined {
    return this.documents?.get(id) ?? this.below.document(id);
  }

  current(id: number): CurrentValue {
    return this.documents?.get(id)?.current ?? this.below.current(id);
  }

  liveAt(address: DocumentAddress): number | undefined {
    const created = this.addresses?.get(addressKey(address));
    const id = created ?? this.below.liveAt(address);
    if (id === undefined) return undefined;
    return this.documents?.get(id)?.retiredAt === undefined ? id : undefined;
  }

  valueAt(id: number, at: number): CurrentValue {
    return this.below.valueAt(id, at);
  }

  addConversation(id: number): void {
    (this.conversations ??= new Set()).add(id);
  }

  addEntry(id: number): void {
    (this.entries ??= new Set()).add(id);
  }

  createDocument(
    id: number,
    address: DocumentAddress,
    createdAt: number,
    currentOnly: boolean,
    current: CurrentValue,
  ): void {
    (this.documents ??= new Map()).set(id, {
      createdAt,
      retiredAt: undefined,
      currentOnly,
      newestBaseSeq: createdAt,
      current,
    });
    (this.addresses ??= new Map()).set(addressKey(address), id);
  }

  changeDocument(
    id: number,
    doc: PlanDocument,
    current: CurrentValue,
    newestBaseSeq: number,
  ): void {
    const own = this.documents?.get(id);
    if (own !== undefined) {
      own.current = current;
      own.newestBaseSeq = newestBaseSeq;
    } else (this.documents ??= new Map()).set(id, layerCopy(doc, current, newestBaseSeq));
  }

  retireDocument(id: number, doc: PlanDocument, seq: number): void {
    const own = this.documents?.get(id);
    if (own !== undefined) {
      own.retiredAt = seq;
      own.current = undefined;
    } else {
      const copy = layerCopy(doc, undefined, doc.newestBaseSeq);
      copy.retiredAt = seq;
      (this.documents ??= new Map()).set(id, copy);
    }
  }
}

/** A stored document's state taken into a layer (only the fields: views may hand out richer objects). */
function layerCopy(
  doc: PlanDocument,
  current: CurrentValue | undefined,
  newestBaseSeq: number,
): LayerDocument {
  const { createdAt, retiredAt, currentOnly } = doc;
  return { createdAt, retiredAt, currentOnly, newestBaseSeq, current };
}
