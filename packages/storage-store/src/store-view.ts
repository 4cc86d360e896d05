import type { DocumentAddress } from "@durably/core";
import {
  addressKey,
  isCurrentOnly,
  isHistoryKept,
  materializeRevisions,
  type CurrentValue,
  type PlanDocument,
  type PlanNeeds,
  type PlanView,
} from "@durably/core/storage";
import { documentRevisions, findLive } from "./documents.js";
import { K } from "./keys.js";
import { decodeDocumentState, type DocumentState } from "./records.js";
import type { Reader } from "./view.js";

/** Current values of recently written documents, so a delta needs no read of the revision tail. */
export class KnownValues {
  readonly #values = new Map<number, CurrentValue>();
  constructor(private readonly limit: number) {}

  get(id: number): CurrentValue | undefined {
    const value = this.#values.get(id);
    if (value !== undefined) {
      this.#values.delete(id);
      this.#values.set(id, value);
    }
    return value;
  }

  set(id: number, value: CurrentValue): void {
    if (this.limit <= 0) return;
    this.#values.delete(id);
    this.#values.set(id, value);
    if (this.#values.size > this.limit)
      this.#values.delete(this.#values.keys().next().value as number);
  }

  delete(id: number): void {
    this.#values.delete(id);
  }
}

/**
 * The committed state a call's planning asks about (`CommitCall.needs()`),
 * read from the store before planning, since the planner's view answers
 * synchronously: which conversations and entries exist, the documents'
 * states and the values it needs, who lives at each address, past values
 * of copies at a seq.
 */
export class StoreView implements PlanView {
  readonly conversations = new Set<number>();
  readonly entries = new Set<number>();
  readonly documents = new Map<number, DocumentState>();
  readonly values = new Map<number, CurrentValue>();
  readonly addresses = new Map<string, number>();
  readonly history = new Map<string, CurrentValue>();

  private constructor(readonly lastSeq: number) {}

  static async fetch(
    reader: Reader,
    needs: PlanNeeds,
    lastSeq: number,
    known: KnownValues,
  ): Promise<StoreView> {
    const view = new StoreView(lastSeq);
    const state = (id: number) => reader.decoded(K.document(id), id, decodeDocumentState);
    for (const ids of [needs.conversations, needs.newConversations])
      for (const id of ids)
        if ((await reader.get(K.conversation(id), id)) !== undefined) view.conversations.add(id);
    for (const id of needs.newEntries)
      if ((await reader.get(K.entryHome(id), id)) !== undefined) view.entries.add(id);
    const ids = [...needs.documents, ...needs.newDocuments, ...needs.history.map((h) => h.id)];
    for (const id of ids) {
      if (view.documents.has(id)) continue;
      const found = await state(id);
      if (found !== undefined) view.documents.set(id, found);
    }
    for (const id of needs.values) {
      const found = view.documents.get(id);
      if (found === undefined || found.record.retiredAt !== undefined) continue;
      const value = known.get(id) ?? (await valueAt(reader, found, "current"));
      view.values.set(id, value);
    }
    for (const address of needs.addresses) {
      const live = await findLive(
        reader,
        K.documentsAt(address.kind, address.scope, address.key),
        "current",
      );
      if (live !== undefined) view.addresses.set(addressKey(address), live.id);
    }
    for (const { id, at } of needs.history) {
      const doc = view.document(id);
      // Only history that is kept: the planner refuses the other copies from the state alone.
      if (doc === undefined || at > lastSeq || !isHistoryKept(doc, at)) continue;
      view.history.set(
        `${id}@${at}`,
        await valueAt(reader, view.documents.get(id) as DocumentState, at),
      );
    }
    return view;
  }

  hasConversation(id: number): boolean {
    return this.conversations.has(id);
  }

  hasEntry(id: number): boolean {
    return this.entries.has(id);
  }

  document(id: number): PlanDocument | undefined {
    const found = this.documents.get(id);
    if (found === undefined) return undefined;
    const { record } = found;
    return {
      createdAt: record.createdAt,
      retiredAt: record.retiredAt,
      currentOnly: isCurrentOnly(record),
      newestBaseSeq: found.base,
    };
  }

  current(id: number): CurrentValue {
    return this.values.get(id) as CurrentValue;
  }

  liveAt(address: DocumentAddress): number | undefined {
    return this.addresses.get(addressKey(address));
  }

  valueAt(id: number, at: number): CurrentValue {
    return this.history.get(`${id}@${at}`) as CurrentValue;
  }
}

async function valueAt(
  reader: Reader,
  state: DocumentState,
  at: number | "current",
): Promise<CurrentValue> {
  const { revisions, where } = await documentRevisions(reader, state, at);
  return materializeRevisions(state.record.id, revisions, where);
}
