import type { ConversationId, EntryId, Order, Storage } from "@durably/core";
import {
  commitOne,
  conversation,
  entry,
  idsOf,
  mintIds,
  ROOT,
  scanAll,
  scenario,
  withRoot,
  type Check,
  type RuleGroup,
} from "./support.js";

interface Tree {
  /** Root entries g1 g2 g3, then g4 after the forks. */
  g: number[];
  /** P forks the root at g2; entries p1 p2. */
  p: number;
  pe: number[];
  /** C forks P at p1; entry c1. */
  c: number;
  ce: number[];
  /** D forks P at g1 (a point P inherited from the root); entry d1. */
  d: number;
  de: number[];
}

/**
 * Builds a fork tree with ids minted in commit order, as a session does:
 * root: g1 g2 g3 | P = fork(root, g2): p1 p2 | C = fork(P, p1): c1 | D = fork(P, g1): d1 | root: g4
 */
async function tree(check: Check, storage: Storage): Promise<Tree> {
  await withRoot(check, storage);
  const g = await mintIds(storage, 3);
  await commitOne(
    check,
    storage,
    g.map((id) => entry(id, ROOT)),
  );
  const [p, ...pe] = await mintIds(storage, 3);
  await commitOne(check, storage, [
    conversation(p!, { parent: { conversationId: ROOT, at: g[1] as EntryId } }),
    ...pe.map((id) => entry(id, p!)),
  ]);
  const [c, ...ce] = await mintIds(storage, 2);
  await commitOne(check, storage, [
    conversation(c!, { parent: { conversationId: p as ConversationId, at: pe[0] as EntryId } }),
    ...ce.map((id) => entry(id, c!)),
  ]);
  const [d, ...de] = await mintIds(storage, 2);
  await commitOne(check, storage, [
    conversation(d!, { parent: { conversationId: p as ConversationId, at: g[0] as EntryId } }),
    ...de.map((id) => entry(id, d!)),
  ]);
  const [g4] = await mintIds(storage, 1);
  await commitOne(check, storage, [entry(g4!, ROOT)]);
  return { g: [...g, g4!], p: p!, pe, c: c!, ce, d: d!, de };
}

async function visible(
  storage: Storage,
  conversationId: number,
  order?: Order,
  extra: object = {},
): Promise<number[]> {
  const query = {
    conversationId: conversationId as ConversationId,
    ...(order ? { order } : {}),
    ...extra,
  };
  return idsOf((await storage.scanEntries(query, 1000)).items);
}

export const entryScans: RuleGroup = {
  rule: "entry scans",
  scenarios: [
    scenario(
      "a conversation's entries come newest first by default and oldest first when ascending",
      async ({ storage, check }) => {
        const t = await tree(check, storage);
        check.equal(
          await visible(storage, ROOT),
          [...t.g].reverse(),
          `scanEntries(${ROOT}) default`,
        );
        check.equal(
          await visible(storage, ROOT, "ascending"),
          t.g,
          `scanEntries(${ROOT}) ascending`,
        );
      },
    ),
    scenario(
      "a fork sees its parent's entries up to and including the fork point, then its own",
      async ({ storage, check }) => {
        const t = await tree(check, storage);
        const want = [t.g[0], t.g[1], ...t.pe];
        check.equal(
          await visible(storage, t.p, "ascending"),
          want,
          `fork ${t.p} of ${ROOT} at entry ${t.g[1]}: ascending`,
        );
        check.equal(
          await visible(storage, t.p, "descending"),
          [...want].reverse(),
          `fork ${t.p}: descending`,
        );
      },
    ),
    scenario(
      "a grand-fork follows the ancestry through every fork point",
      async ({ storage, check }) => {
        const t = await tree(check, storage);
        check.equal(
          await visible(storage, t.c, "ascending"),
          [t.g[0], t.g[1], t.pe[0], ...t.ce],
          `grand-fork ${t.c} (of ${t.p} at ${t.pe[0]})`,
        );
        check.equal(
          await visible(storage, t.d, "ascending"),
          [t.g[0], ...t.de],
          `grand-fork ${t.d} (of ${t.p} at inherited entry ${t.g[0]})`,
        );
      },
    ),
    scenario(
      "minEntryId and maxEntryId are inclusive bounds, also across fork points",
      async ({ storage, check }) => {
        const t = await tree(check, storage);
        const bounds = { minEntryId: t.g[1], maxEntryId: t.ce[0] };
        check.equal(
          await visible(storage, t.c, "ascending", bounds),
          [t.g[1], t.pe[0], t.ce[0]],
          `scanEntries(${t.c}, ${JSON.stringify(bounds)})`,
        );
        check.equal(
          await visible(storage, t.c, "descending", { maxEntryId: t.pe[0] }),
          [t.pe[0], t.g[1], t.g[0]],
          `scanEntries(${t.c}, maxEntryId ${t.pe[0]})`,
        );
        check.equal(
          await visible(storage, ROOT, "ascending", { minEntryId: t.g[3] }),
          [t.g[3]],
          `scanEntries(${ROOT}, minEntryId ${t.g[3]})`,
        );
      },
    ),
    scenario(
      "paging through a grand-fork with any limit yields every visible entry once, in both orders",
      async ({ storage, check }) => {
        const t = await tree(check, storage);
        const want = [t.g[0], t.g[1], t.pe[0], ...t.ce];
        for (const order of ["ascending", "descending"] as Order[])
          for (const limit of [1, 2, 3]) {
            const query = { conversationId: t.c as ConversationId, order };
            const items = await scanAll(
              check,
              `scanEntries(${t.c}, ${order}, limit ${limit})`,
              limit,
              (cursor) => storage.scanEntries(query, limit, cursor),
            );
            check.equal(
              idsOf(items),
              order === "ascending" ? want : [...want].reverse(),
              `paged scanEntries(${t.c}, ${order}, limit ${limit})`,
            );
          }
      },
    ),
    scenario(
      "scanEntries of an unknown conversation gives an empty page",
      async ({ storage, check }) => {
        await tree(check, storage);
        const [x] = await mintIds(storage, 1);
        const page = await storage.scanEntries({ conversationId: x as ConversationId }, 10);
        check.equal(page, { items: [] }, `scanEntries of unknown conversation ${x}`);
      },
    ),
    scenario(
      "latestHead is the newest visible entry carrying head at or before atOrBefore, following forks",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [h1, plain, h2] = await mintIds(storage, 3);
        await commitOne(check, storage, [
          entry(h1!, ROOT, { head: h1 as EntryId }),
          entry(plain!, ROOT),
          entry(h2!, ROOT, { head: plain as EntryId }),
        ]);
        const [f, fe] = await mintIds(storage, 2);
        await commitOne(check, storage, [
          conversation(f!, { parent: { conversationId: ROOT, at: plain as EntryId } }),
          entry(fe!, f!),
        ]);
        const [h3] = await mintIds(storage, 1);
        await commitOne(check, storage, [entry(h3!, f!, { head: h3 as EntryId })]);
        const head = async (c: number, at?: number) =>
          (await storage.latestHead(c as ConversationId, at as EntryId | undefined))?.id;
        check.equal(
          {
            root: await head(ROOT),
            rootAtPlain: await head(ROOT, plain),
            rootBeforeH1: await head(ROOT, h1! - 1),
            fork: await head(f!),
            forkAtFe: await head(f!, fe),
          },
          { root: h2, rootAtPlain: h1, rootBeforeH1: undefined, fork: h3, forkAtFe: h1 },
          `heads: root ${h1}, ${h2}; fork ${f} at ${plain} sees ${h1} (not ${h2}), then its own ${h3}`,
        );
      },
    ),
  ],
};
