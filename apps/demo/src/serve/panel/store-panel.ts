import type { KeyValueStore } from "@durably/storage-store";
import { PANEL_ROWS, tableSection, type PanelReader, type TableSection } from "./section.js";

/** Ids in keys are 16-digit zero-padded decimals (the Store's documented key layout). */
const pad = (n: number): string => String(n).padStart(16, "0");
/** The exclusive upper bound of a prefix range. */
const after = (prefix: string): string =>
  prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);

async function newestUnder(
  store: KeyValueStore,
  prefix: string,
): Promise<{ pairs: [string, string][]; more: boolean }> {
  const pairs: [string, string][] = [];
  for await (const pair of store.range({
    gte: prefix,
    lt: after(prefix),
    reverse: true,
    limit: PANEL_ROWS + 1,
  }))
    pairs.push(pair);
  const more = pairs.length > PANEL_ROWS;
  return { pairs: pairs.slice(0, PANEL_ROWS).reverse(), more };
}

function section(title: string, pairs: [string, string][], more: boolean): TableSection {
  const rows = pairs.map(([key, value]) => ({ key, value }));
  // The total is not counted (that would read the whole range): "more" shows as one left out.
  return tableSection(title, ["key", "value"], rows, rows.length + (more ? 1 : 0));
}

/** The trailing id of an index key such as `tc/<conversation>/<task>`. */
const trailingId = (key: string): number => Number(key.slice(key.lastIndexOf("/") + 1));

/**
 * The keys behind a conversation in a Store (LevelDB) database, read
 * through the same open database (LevelDB allows one process; its
 * iterators read a consistent snapshot while commits go on).
 */
export function storePanel(store: KeyValueStore, dir: string): PanelReader {
  return {
    async read(conversationId) {
      const c = pad(conversationId);
      const sections: TableSection[] = [];
      const own = await store.get(`c/${c}`);
      sections.push(
        section(
          `c/${c} (the conversation record)`,
          own === undefined ? [] : [[`c/${c}`, own]],
          false,
        ),
      );
      const entries = await newestUnder(store, `e/${c}/`);
      sections.push(
        section(`e/${c}/… (entries, newest ${PANEL_ROWS})`, entries.pairs, entries.more),
      );
      for (const [index, record, what] of [
        ["sc", "s", "submissions"],
        ["tc", "t", "tasks"],
      ] as const) {
        const found = await newestUnder(store, `${index}/${c}/`);
        const pairs: [string, string][] = [];
        for (const [key] of found.pairs) {
          const recordKey = `${record}/${pad(trailingId(key))}`;
          const value = await store.get(recordKey);
          if (value !== undefined) pairs.push([recordKey, value]);
        }
        sections.push(
          section(`${record}/… (${what}, found through ${index}/${c}/…)`, pairs, found.more),
        );
      }
      const docs = await newestUnder(store, `ds/c:${conversationId}/`);
      for (const [key] of docs.pairs) {
        const d = pad(trailingId(key));
        const record = await store.get(`d/${d}`);
        const revisions = await newestUnder(store, `r/${d}/`);
        sections.push(
          section(
            `d/${d} and r/${d}/… (a document of the conversation and its revisions)`,
            [
              ...(record === undefined ? [] : [[`d/${d}`, record] as [string, string]]),
              ...revisions.pairs,
            ],
            revisions.more,
          ),
        );
      }
      return {
        summary: `Keys of the LevelDB database in ${dir}, read through the storage's own handle; each value starts with its 8-hex-digit CRC-32C.`,
        sections,
      };
    },
    close: () => Promise.resolve(),
  };
}
