import { dumpKeys, keyRanges, type KeyValueStore } from "@durably/storage-store";
import type { Section } from "./section.js";

export interface StoreDump {
  sections: Section[];
  /** Keys per range prefix (`e/`, `r/`...), for the checks. */
  counts: Map<string, number>;
  total: number;
}

/** The store's key ranges (what each holds, how many keys) and every key and value in key order. */
export async function dumpStore(store: KeyValueStore): Promise<StoreDump> {
  const ranges = await keyRanges(store);
  const pairs = await dumpKeys(store);
  return {
    counts: new Map(ranges.map((r) => [r.prefix, r.count])),
    total: pairs.length,
    sections: [
      {
        title: "key ranges",
        table: {
          columns: [{ header: "range" }, { header: "keys", align: "right" }, { header: "holds" }],
          rows: ranges.map((r) => [r.prefix, String(r.count), r.holds]),
        },
      },
      {
        title: `keys and values, in key order (${pairs.length})`,
        table: {
          columns: [{ header: "key" }, { header: "value" }],
          rows: pairs.map((p) => [p.key, p.value]),
        },
      },
    ],
  };
}
