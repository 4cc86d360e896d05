import type { DocumentId } from "../domain/ids.js";
import type { Json } from "../domain/json.js";
import { applyOps, type Op } from "../domain/ops.js";
import type { NewDocumentRecord } from "../domain/records.js";
import type { StorageWrite } from "../storage/port.js";
import type { PreparedCommit } from "./prepared.js";
import { addressKey } from "./tokens.js";

/** One storage batch made of several deferred commits. */
export interface CoalescedBatch<L> {
  readonly writes: StorageWrite[];
  readonly layers: readonly L[];
  /** The layers' counted sizes added up (coalescing only shrinks what they wrote). */
  readonly bytes: number;
}

type Content =
  | { kind: "create"; record: NewDocumentRecord; version: number }
  | { kind: "copy"; write: StorageWrite }
  | { kind: "base"; version: number }
  | { kind: "delta"; version: number; ops: Op[] };

interface DocEntry {
  content: Content | undefined;
  /** Value after the newest layer that wrote it, kept while a merged base or creation needs it. */
  value: Json | undefined;
  retired: boolean;
}

function recordAddressKey(record: NewDocumentRecord): string {
  return addressKey({
    kind: record.kind,
    scope: record.scope,
    ...(record.key !== undefined ? { key: record.key } : {}),
  });
}

/**
 * Coalesces consecutive deferred commits into as few batches as storage
 * accepts: table writes concatenated (a replaced task or
 * submission keeps only its newest value), one content write per document
 * (deltas concatenated; any base, creation or copy becomes one write of the
 * final value), retirements last. A new incarnation at an address retired
 * earlier in the same group would be refused (retirement applies after
 * content), so it starts a new group; so does a layer that would take the
 * group's counted size past `budget` (one storage call stays bounded).
 */
export function coalesce<L>(
  layers: readonly L[],
  preparedOf: (layer: L) => PreparedCommit,
  budget = Number.POSITIVE_INFINITY,
): CoalescedBatch<L>[] {
  const out: CoalescedBatch<L>[] = [];
  let group: Group<L> | undefined;
  for (const layer of layers) {
    const prepared = preparedOf(layer);
    if (!group || group.conflicts(prepared) || group.bytes + prepared.bytes > budget) {
      if (group) out.push(group.build());
      group = new Group<L>();
    }
    group.add(layer, prepared);
  }
  if (group) out.push(group.build());
  return out;
}

class Group<L> {
  private readonly layers: L[] = [];
  bytes = 0;
  private readonly tables: StorageWrite[] = [];
  private readonly replaced = new Map<string, number>();
  private readonly docs = new Map<DocumentId, DocEntry>();
  private readonly retiredAddresses = new Set<string>();

  conflicts(layer: PreparedCommit): boolean {
    for (const write of layer.writes) {
      if (
        (write.type === "document.create" || write.type === "document.copy") &&
        this.retiredAddresses.has(recordAddressKey(write.record))
      )
        return true;
    }
    return false;
  }

  add(tag: L, layer: PreparedCommit): void {
    this.layers.push(tag);
    this.bytes += layer.bytes;
    const finals = new Map<number, Json>();
    for (const change of layer.docs)
      if (change.state) finals.set(change.state.id, change.state.value);
    for (const write of layer.writes) {
      switch (write.type) {
        case "task":
        case "submission": {
          const key = `${write.type}:${write.value.id}`;
          const at = this.replaced.get(key);
          if (at === undefined) {
            this.replaced.set(key, this.tables.length);
            this.tables.push(write);
          } else this.tables[at] = write;
          break;
        }
        case "conversation":
        case "entry":
          this.tables.push(write);
          break;
        case "document.create":
          this.docs.set(write.record.id, {
            content: { kind: "create", record: write.record, version: write.content.version },
            value: write.content.value,
            retired: false,
          });
          break;
        case "document.copy":
          this.docs.set(write.record.id, {
            content: { kind: "copy", write },
            value: finals.get(write.record.id),
            retired: false,
          });
          break;
        case "document.change": {
          const entry: DocEntry = this.docs.get(write.id) ?? {
            content: undefined,
            value: undefined,
            retired: false,
          };
          const prior = entry.content;
          const next = write.content;
          if (prior === undefined) {
            entry.content =
              next.kind === "base"
                ? { kind: "base", version: next.version }
                : { kind: "delta", version: next.version, ops: [...next.ops] };
          } else if (prior.kind === "copy") {
            // A copy changed later in the group: store the final value as a creation of that incarnation.
            const record = (prior.write as { record: NewDocumentRecord }).record;
            entry.content = { kind: "create", record, version: next.version };
          } else if (prior.kind === "create") {
            entry.content = { kind: "create", record: prior.record, version: next.version };
          } else if (prior.kind === "delta" && next.kind === "delta") {
            prior.ops.push(...next.ops);
          } else {
            entry.content = { kind: "base", version: next.version };
          }
          if (next.kind === "base") entry.value = next.value;
          else if (entry.content?.kind !== "delta")
            entry.value =
              finals.get(write.id) ??
              (entry.value !== undefined ? applyOps(entry.value, next.ops) : undefined);
          this.docs.set(write.id, entry);
          break;
        }
        case "document.retire": {
          const entry: DocEntry = this.docs.get(write.id) ?? {
            content: undefined,
            value: undefined,
            retired: false,
          };
          entry.retired = true;
          this.docs.set(write.id, entry);
          break;
        }
      }
    }
    for (const change of layer.docs)
      if (change.state === null) this.retiredAddresses.add(change.addressKey);
  }

  build(): CoalescedBatch<L> {
    const content: StorageWrite[] = [];
    const retires: StorageWrite[] = [];
    for (const [id, entry] of this.docs) {
      const c = entry.content;
      if (c) {
        const value = entry.value;
        switch (c.kind) {
          case "copy":
            content.push(c.write);
            break;
          case "create":
            if (value === undefined)
              throw new Error(`internal: coalesced document ${id} has no final value`);
            content.push({
              type: "document.create",
              record: c.record,
              content: { kind: "base", version: c.version, value },
            });
            break;
          case "base":
            if (value === undefined)
              throw new Error(`internal: coalesced document ${id} has no final value`);
            content.push({
              type: "document.change",
              id,
              content: { kind: "base", version: c.version, value },
            });
            break;
          case "delta":
            content.push({
              type: "document.change",
              id,
              // Each op is frozen already; the merged list is frozen too (see isSealedBatches).
              content: { kind: "delta", version: c.version, ops: Object.freeze(c.ops) as Op[] },
            });
            break;
        }
      }
      if (entry.retired) retires.push({ type: "document.retire", id });
    }
    return {
      writes: [...this.tables, ...content, ...retires],
      layers: this.layers,
      bytes: this.bytes,
    };
  }
}
