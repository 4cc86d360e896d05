import type { KeyValueStore } from "./key-value-store.js";
import { KEY_RANGES, prefixEnd } from "./keys.js";

export interface StoredPair {
  key: string;
  value: string;
}

/** Every key (and value) under `prefix`, in key order: what a `StoreStorage` stored, for demos and debugging. */
export async function dumpKeys(
  store: KeyValueStore,
  options: { prefix?: string; limit?: number } = {},
): Promise<StoredPair[]> {
  const { prefix, limit } = options;
  const out: StoredPair[] = [];
  const range = prefix === undefined || prefix === "" ? {} : { gte: prefix, lt: prefixEnd(prefix) };
  for await (const [key, value] of store.range(limit === undefined ? range : { ...range, limit }))
    out.push({ key, value });
  return out;
}

export interface KeyRangeSummary {
  prefix: string;
  holds: string;
  count: number;
  first?: string;
  last?: string;
}

/** One line per key range of the layout that holds keys: how many, the first and the last. */
export async function keyRanges(store: KeyValueStore): Promise<KeyRangeSummary[]> {
  const out: KeyRangeSummary[] = [];
  for (const { prefix, holds } of KEY_RANGES) {
    let count = 0;
    let first: string | undefined;
    let last: string | undefined;
    for await (const [key] of store.range({ gte: prefix, lt: prefixEnd(prefix) })) {
      first ??= key;
      last = key;
      count++;
    }
    if (count > 0)
      out.push({
        prefix,
        holds,
        count,
        ...(first === undefined ? {} : { first }),
        ...(last === undefined ? {} : { last }),
      });
  }
  return out;
}
