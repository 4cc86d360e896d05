/**
 * A workload written through the raw storage port with everything it
 * stored written down (the ledger), and a verifier that reads it all back
 * through the port. Used by the damage tests: after a byte of the file is
 * changed, every read must either return exactly what the ledger says or
 * fail with `StorageCorrupted`; a read that returns anything else (a hole,
 * an older value) is a silent loss.
 */
import type {
  ConversationId,
  DocumentId,
  EntryId,
  Json,
  Seq,
  Storage,
  StorageWrite,
  TaskId,
  TaskRecord,
} from "@durably/core";

export const ROOT = 1 as ConversationId;
export const FORK = 2 as ConversationId;
export const REWINDABLE = 10 as DocumentId;
export const CURRENT_ONLY = 11 as DocumentId;

interface LedgerEntry {
  id: number;
  conversationId: number;
  i: number;
  head: boolean;
  seq: number;
}

export interface Ledger {
  commits: number;
  forkAt: number;
  entries: LedgerEntry[];
  /** The rewindable document's value after each seq it was written at. */
  history: Map<number, Json>;
  currentOnly: Json;
  tasks: Map<number, TaskRecord>;
}

const text = "lorem ipsum dolor sit amet ".repeat(4);

function task(id: number, i: number, terminal: boolean): TaskRecord {
  return {
    id: id as TaskId,
    conversationId: ROOT,
    kind: "job",
    version: 1,
    input: { i },
    background: false,
    abortRequested: false,
    state: terminal
      ? { status: "terminal", outcome: { kind: "done", value: { i } } }
      : { status: "pending", checkpoint: null },
  } as TaskRecord;
}

/**
 * Writes `commits` commit calls: each appends an entry to the root
 * conversation (every 25th a head), from commit `forkAt` on one to a fork
 * too, changes a rewindable document (a new base every 100 commits) and a
 * current-only one (a new base every 7, which reclaims the older
 * revisions), and creates or finishes a task every 5.
 */
export async function writeLedger(storage: Storage, commits = 300, forkAt = 150): Promise<Ledger> {
  const ledger: Ledger = {
    commits,
    forkAt,
    entries: [],
    history: new Map(),
    currentOnly: null,
    tasks: new Map(),
  };
  let rewindable: { count: number; text: string } = { count: 0, text: "" };
  let currentOnly: { n: number } = { n: -1 };
  for (let i = 0; i < commits; i++) {
    const writes: StorageWrite[] = [];
    if (i === 0)
      writes.push(
        { type: "conversation", value: { id: ROOT } },
        {
          type: "document.create",
          record: {
            id: REWINDABLE,
            kind: "log",
            scope: { kind: "conversation", conversationId: ROOT },
            history: "rewindable",
          },
          content: { kind: "base", version: 1, value: rewindable },
        },
        {
          type: "document.create",
          record: { id: CURRENT_ONLY, kind: "state", scope: { kind: "session" } },
          content: { kind: "base", version: 1, value: currentOnly },
        },
      );
    const rootEntry = 1000 + 2 * i;
    const head = i % 25 === 24;
    writes.push({
      type: "entry",
      value: {
        id: rootEntry as EntryId,
        conversationId: ROOT,
        kind: "note",
        data: { i, text },
        ...(head ? { head: rootEntry as EntryId } : {}),
      },
    });
    ledger.entries.push({ id: rootEntry, conversationId: ROOT, i, head, seq: 0 });
    if (i === forkAt)
      writes.push({
        type: "conversation",
        value: { id: FORK, parent: { conversationId: ROOT, at: rootEntry as EntryId } },
      });
    if (i >= forkAt) {
      const forkHead = i % 25 === 12;
      const id = rootEntry + 1;
      writes.push({
        type: "entry",
        value: {
          id: id as EntryId,
          conversationId: FORK,
          kind: "note",
          data: { i, fork: true },
          ...(forkHead ? { head: id as EntryId } : {}),
        },
      });
      ledger.entries.push({ id, conversationId: FORK, i, head: forkHead, seq: 0 });
    }
    if (i > 0) {
      rewindable = { count: i, text: `${rewindable.text}${i},` };
      writes.push({
        type: "document.change",
        id: REWINDABLE,
        content:
          i % 100 === 0
            ? { kind: "base", version: 1, value: rewindable }
            : {
                kind: "delta",
                version: 1,
                ops: [
                  ["s", ["count"], i],
                  ["a", ["text"], `${i},`],
                ],
              },
      });
      currentOnly = { n: i };
      writes.push({
        type: "document.change",
        id: CURRENT_ONLY,
        content:
          i % 7 === 0
            ? { kind: "base", version: 1, value: currentOnly }
            : { kind: "delta", version: 1, ops: [["s", ["n"], i]] },
      });
    }
    if (i % 5 === 0) {
      const record = task(5000 + i, i, false);
      writes.push({ type: "task", value: record });
      ledger.tasks.set(record.id, record);
    } else if (i % 5 === 3) {
      const record = task(5000 + i - 3, i - 3, true);
      writes.push({ type: "task", value: record });
      ledger.tasks.set(record.id, record);
    }
    let seq = 0;
    const result = await storage.commit([writes], (_, s) => (seq = s));
    if (result.refused) throw result.refused;
    for (const e of ledger.entries) if (e.i === i) e.seq = seq;
    ledger.history.set(seq, structuredClone(rewindable));
  }
  ledger.currentOnly = currentOnly;
  return ledger;
}

async function scanAll(
  storage: Storage,
  conversationId: ConversationId,
  order: "ascending" | "descending",
  limit: number,
): Promise<number[]> {
  const ids: number[] = [];
  let cursor: unknown;
  do {
    const page = await storage.scanEntries({ conversationId, order }, limit, cursor as never);
    ids.push(...page.items.map((e) => e.id));
    cursor = page.next;
  } while (cursor !== undefined);
  return ids;
}

/**
 * Reads everything the ledger holds through the port and returns how what
 * came back differs (empty when it is exact). Read errors propagate.
 */
export async function verifyLedger(storage: Storage, ledger: Ledger): Promise<string[]> {
  const problems: string[] = [];
  const same = (what: string, got: unknown, want: unknown) => {
    if (JSON.stringify(got) !== JSON.stringify(want))
      problems.push(
        `${what}: got ${JSON.stringify(got)?.slice(0, 160)}, want ${JSON.stringify(want)?.slice(0, 160)}`,
      );
  };
  const forkEntry = ledger.entries.find((e) => e.conversationId === ROOT && e.i === ledger.forkAt);
  const visible = (c: number) =>
    ledger.entries.filter(
      (e) =>
        e.conversationId === c ||
        (c === FORK && e.conversationId === ROOT && e.id <= (forkEntry?.id ?? 0)),
    );
  for (const c of [ROOT, FORK]) {
    const want = visible(c)
      .map((e) => e.id)
      .sort((a, b) => a - b);
    for (const limit of [1000, 37])
      for (const order of ["ascending", "descending"] as const) {
        const got = await scanAll(storage, c, order, limit);
        same(
          `scanEntries(${c}, ${order}, pages of ${limit})`,
          got,
          order === "ascending" ? want : [...want].reverse(),
        );
      }
    const heads = visible(c)
      .filter((e) => e.head)
      .map((e) => e.id);
    same(`latestHead(${c})`, (await storage.latestHead(c))?.id, heads[heads.length - 1]);
    for (const at of [1100, 1301, 1500])
      same(
        `latestHead(${c}, ${at})`,
        (await storage.latestHead(c, at as EntryId))?.id,
        heads.filter((h) => h <= at).pop(),
      );
  }
  for (const e of ledger.entries) {
    const got = await storage.entry(e.id as EntryId);
    same(`entry(${e.id})`, got && { i: (got.entry.data as { i: number }).i, seq: got.commitSeq }, {
      i: e.i,
      seq: e.seq,
    });
  }
  for (const [seq, value] of ledger.history)
    same(
      `document(${REWINDABLE}, ${seq})`,
      (await storage.document(REWINDABLE, seq as Seq))?.value,
      value,
    );
  same(
    `document(${REWINDABLE}, current)`,
    (await storage.document(REWINDABLE, "current"))?.value,
    [...ledger.history.values()].pop(),
  );
  same(
    `document(${CURRENT_ONLY}, current)`,
    (await storage.document(CURRENT_ONLY, "current"))?.value,
    ledger.currentOnly,
  );
  for (const [id, record] of ledger.tasks)
    same(`task(${id})`, await storage.task(id as TaskId), record);
  const tasks: number[] = [];
  let cursor: unknown;
  do {
    const page = await storage.scanTasks({}, 50, cursor as never);
    tasks.push(...page.items.map((t) => t.id));
    cursor = page.next;
  } while (cursor !== undefined);
  same(
    "scanTasks({})",
    tasks,
    [...ledger.tasks.keys()].sort((a, b) => a - b),
  );
  same(`conversation(${FORK})`, (await storage.conversation(FORK))?.parent?.at, forkEntry?.id);
  return problems;
}
