import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StorageCorrupted, type EntryId, type Seq } from "@durably/core";
import { openSqliteStorage, type OpenCheck, type SqliteStorage } from "../src/index.js";
import { tempDir } from "./helpers.js";
import { flipBit, leafPages, lowerCellCount } from "./support/btree.js";
import {
  CURRENT_ONLY,
  FORK,
  REWINDABLE,
  ROOT,
  verifyLedger,
  writeLedger,
  type Ledger,
} from "./support/ledger.js";

let dir: ReturnType<typeof tempDir>;
let pristine: string;
let ledger: Ledger;
let trial = 0;

beforeAll(async () => {
  dir = tempDir("durably-sqlite-holes-");
  pristine = join(dir.dir, "pristine.sqlite");
  const storage = await openSqliteStorage(pristine);
  ledger = await writeLedger(storage);
  await storage.close();
});
afterAll(() => dir.cleanup());

/** A fresh copy of the written file. */
function copy(): string {
  const path = join(dir.dir, `trial-${trial++}.sqlite`);
  copyFileSync(pristine, path);
  return path;
}

/** Lowers by 3 the cell count of the first leaf (in key order) of `name`: one changed byte. */
function holeIn(path: string, name: string, leaf = 0): void {
  const { leaves, pageSize } = leafPages(path, name);
  expect(leaves.length, `${name} leaves`).toBeGreaterThan(leaf);
  const { before, after } = lowerCellCount(path, leaves[leaf] as number, pageSize, 3);
  expect(after).toBe(before - 3);
}

/** The values of `sql` that the pristine file returns and the damaged copy at `path` no longer does. */
function lost(path: string, sql: string): number[] {
  const read = (file: string) => {
    const raw = new Database(file, { readonly: true });
    try {
      return (raw.prepare(sql).raw().all() as number[][]).map((r) => r[0] as number);
    } finally {
      raw.close();
    }
  };
  const now = new Set(read(path));
  return read(pristine).filter((v) => !now.has(v));
}

async function corrupted(work: () => Promise<unknown>): Promise<StorageCorrupted> {
  const error = await work().then(
    (value) => new Error(`expected StorageCorrupted, got ${JSON.stringify(value)?.slice(0, 200)}`),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StorageCorrupted);
  return error as StorageCorrupted;
}

async function open(path: string, openCheck: OpenCheck): Promise<SqliteStorage> {
  return openSqliteStorage(path, { openCheck });
}

describe("one damaged byte that drops rows from a b-tree is found at open", () => {
  it("the written file is whole: every read returns exactly what was written", async () => {
    const storage = await open(copy(), "quick");
    expect(await verifyLedger(storage, ledger)).toEqual([]);
    await storage.close();
  });

  it.each([
    ["entries_by_conversation", "index entries_by_conversation"],
    ["document_revisions", "document_revisions"],
    ["entries", "entries"],
    ["tasks", "tasks"],
  ])(
    "a leaf of %s losing three cells fails the open with StorageCorrupted naming the file, the b-tree and what quick_check said",
    async (name, named) => {
      const path = copy();
      holeIn(path, name);
      const error = await corrupted(() => open(path, "quick"));
      expect(error.location.file).toBe(path);
      expect(error.message).toContain(path);
      expect(error.message).toMatch(/SQLite's quick_check at open reported/);
      expect(error.message).toContain(named.split(" ").pop() as string);
      // The refused open let go of the file.
      const raw = new Database(path);
      raw.close();
    },
  );

  it("the full check (integrity_check) finds the same damage", async () => {
    const path = copy();
    holeIn(path, "entries_by_conversation");
    const error = await corrupted(() => open(path, "full"));
    expect(error.message).toMatch(/SQLite's integrity_check at open reported/);
  });
});

describe("with the open check skipped, reads find the rows a damaged page dropped (the chains)", () => {
  it("entries missing from the conversation index fail every scan that crosses them, naming the newest missing entry; nothing is returned with a hole", async () => {
    const path = copy();
    holeIn(path, "entries_by_conversation");
    // The rows the damaged leaf dropped, as SQLite now walks the index.
    const dropped = lost(
      path,
      "SELECT id FROM entries INDEXED BY entries_by_conversation WHERE conversation_id = 1 ORDER BY id",
    );
    expect(dropped).toHaveLength(3);
    const storage = await open(path, "none");
    const missing: number[] = [];
    for (const order of ["ascending", "descending"] as const)
      for (const limit of [1000, 100, 7]) {
        const error = await corrupted(async () => {
          let cursor: unknown;
          do {
            const page = await storage.scanEntries(
              { conversationId: ROOT, order },
              limit,
              cursor as never,
            );
            cursor = page.next;
          } while (cursor !== undefined);
        });
        expect(error.location).toMatchObject({ file: path, table: "entries" });
        expect(error.message).toMatch(/entry \d+ of conversation 1 is missing/);
        missing.push(Number(error.location.key));
      }
    // The entry after the hole links to the newest lost one.
    expect(new Set(missing)).toEqual(new Set([dropped[2]]));
    // Entries outside the hole are still read by id.
    expect((await storage.entry(1000 as EntryId))?.entry.data).toMatchObject({ i: 0 });
    await storage.close();
  });

  it("revisions missing from the middle of a rewindable document fail every read that reaches them, naming document and seq; every other read is exact", async () => {
    const path = copy();
    holeIn(path, "document_revisions");
    const dropped = lost(
      path,
      `SELECT seq FROM document_revisions WHERE document_id = ${REWINDABLE} ORDER BY seq`,
    );
    expect(dropped).toHaveLength(3);
    const [first, , newest] = dropped as [number, number, number];
    const storage = await open(path, "none");
    // A read reaches the hole from the revision just before it (it cannot prove that nothing it
    // needs is lost) up to the next base (every 100 commits), which starts a new delta tail.
    const nextBase = [...ledger.history.keys()].find((seq) => seq > first && (seq - 1) % 100 === 0);
    const reaches = (seq: number) => seq >= first - 1 && seq < (nextBase ?? Infinity);
    for (const [seq, value] of ledger.history) {
      if (!reaches(seq)) {
        expect((await storage.document(REWINDABLE, seq as Seq))?.value).toEqual(value);
        continue;
      }
      const error = await corrupted(() => storage.document(REWINDABLE, seq as Seq));
      expect(error.location).toMatchObject({
        file: path,
        table: "document_revisions",
        key: `${REWINDABLE}/${newest}`,
        documentId: REWINDABLE,
        seq: newest,
      });
      expect(error.message).toContain(
        `revision seq ${newest} of document ${REWINDABLE} is missing`,
      );
    }
    expect([...ledger.history.keys()].filter(reaches).length).toBeGreaterThan(3);
    await storage.close();
  });

  it("heads missing from the heads index fail latestHead where they would be the answer, naming the newest one; other answers are exact", async () => {
    const path = copy();
    const { leaves } = leafPages(path, "entries_heads");
    holeIn(path, "entries_heads", leaves.length - 1);
    // The index is ordered by conversation: its last cells are the fork's newest heads.
    const dropped = lost(
      path,
      "SELECT id FROM entries INDEXED BY entries_heads WHERE head = 1 ORDER BY conversation_id, id",
    );
    expect(dropped).toHaveLength(3);
    const storage = await open(path, "none");
    const error = await corrupted(() => storage.latestHead(FORK));
    expect(error.location).toMatchObject({ table: "entries", key: String(dropped[2]) });
    expect(error.message).toMatch(
      new RegExp(`head ${dropped[2]} of conversation ${FORK} is missing`),
    );
    const rootHeads = ledger.entries.filter((e) => e.head && e.conversationId === ROOT);
    expect((await storage.latestHead(ROOT))?.id).toBe(rootHeads[rootHeads.length - 1]?.id);
    // Asked for a head before the lost ones, the read cannot prove the answer either: every
    // head after it is gone, so nothing links back to it.
    const before = await corrupted(() =>
      storage.latestHead(FORK, ((dropped[0] as number) - 1) as EntryId),
    );
    expect(before.location).toMatchObject({ table: "entries", key: String(dropped[2]) });
    await storage.close();
  });
});

describe("rows lost one by one (deleted through SQL, the b-tree stays valid) are reported by the chains", () => {
  /** A copy with `sql` run on it by a plain connection; the storage's open check passes. */
  function edited(sql: string): string {
    const path = copy();
    const raw = new Database(path);
    raw.exec(sql);
    raw.close();
    return path;
  }

  it.each([
    ["an entry in the middle", "DELETE FROM entries WHERE id = 1200", "1200"],
    ["the newest entry", "DELETE FROM entries WHERE id = 1598", "1598"],
    ["the oldest entry", "DELETE FROM entries WHERE id = 1000", "1000"],
  ])("%s: scans in both orders fail with StorageCorrupted naming it", async (_, sql, key) => {
    const storage = await open(edited(sql), "quick");
    for (const order of ["ascending", "descending"] as const) {
      const error = await corrupted(async () => {
        let cursor: unknown;
        do {
          const page = await storage.scanEntries(
            { conversationId: ROOT, order },
            50,
            cursor as never,
          );
          cursor = page.next;
        } while (cursor !== undefined);
      });
      expect(error.location).toMatchObject({ table: "entries", key });
    }
    await storage.close();
  });

  it("a lost fork point entry fails the fork's scans; the fork's own entries before it are not affected", async () => {
    const forkAt = 1000 + 2 * ledger.forkAt;
    const storage = await open(edited(`DELETE FROM entries WHERE id = ${forkAt - 2}`), "quick");
    const error = await corrupted(() => storage.scanEntries({ conversationId: 2 as never }, 1000));
    expect(error.location).toMatchObject({ table: "entries", key: String(forkAt - 2) });
    await storage.close();
  });

  it("the newest delta of a document lost: the current read fails naming its seq instead of returning the older value", async () => {
    const last = [...ledger.history.keys()].pop() as number;
    const storage = await open(
      edited(`DELETE FROM document_revisions WHERE document_id = ${REWINDABLE} AND seq = ${last}`),
      "quick",
    );
    const error = await corrupted(() => storage.document(REWINDABLE, "current"));
    expect(error.location).toMatchObject({ documentId: REWINDABLE, seq: last });
    // Reads since the newest base cannot prove their tail whole either; older ones are exact.
    await corrupted(() => storage.document(REWINDABLE, last as Seq));
    await corrupted(() => storage.document(REWINDABLE, (last - 1) as Seq));
    expect((await storage.document(REWINDABLE, 150 as Seq))?.value).toEqual(
      ledger.history.get(150),
    );
    await storage.close();
  });

  it("a lost delta of a current-only document fails its read and the next change that needs its value", async () => {
    const raw = new Database(pristine, { readonly: true });
    const { seq } = raw
      .prepare(
        "SELECT max(seq) AS seq FROM document_revisions WHERE document_id = ? AND kind = 'delta'",
      )
      .get(CURRENT_ONLY) as { seq: number };
    raw.close();
    const storage = await open(
      edited(`DELETE FROM document_revisions WHERE document_id = ${CURRENT_ONLY} AND seq = ${seq}`),
      "quick",
    );
    const error = await corrupted(() => storage.document(CURRENT_ONLY, "current"));
    expect(error.location).toMatchObject({ documentId: CURRENT_ONLY, seq });
    await corrupted(() =>
      storage.commit(
        [
          [
            {
              type: "document.change",
              id: CURRENT_ONLY,
              content: { kind: "delta", version: 1, ops: [["s", ["n"], 0]] },
            },
          ],
        ],
        () => {},
      ),
    );
    await storage.close();
  });

  it("a lost tip row fails the scans of its conversation and the next append to it, naming tips", async () => {
    const storage = await open(
      edited("DELETE FROM tips WHERE id = 1 AND chain = 'entries'"),
      "quick",
    );
    const scan = await corrupted(() => storage.scanEntries({ conversationId: ROOT }, 10));
    expect(scan.location).toMatchObject({ table: "entries" });
    const append = await corrupted(() =>
      storage.commit(
        [[{ type: "entry", value: { id: 9000 as EntryId, conversationId: ROOT, kind: "note" } }]],
        () => {},
      ),
    );
    expect(append.location).toMatchObject({ table: "tips", key: "1/entries" });
    await storage.close();
  });
});

describe("an index key changed in place (the b-tree stays valid, the row it points at is whole)", () => {
  /** Every place in the conversation index's leaves where `id` is stored as a 2-byte integer. */
  function keyBytes(path: string, id: number): number[] {
    const { leaves, pageSize } = leafPages(path, "entries_by_conversation");
    const file = readFileSync(path);
    const offsets: number[] = [];
    for (const page of leaves) {
      const start = (page - 1) * pageSize;
      for (let i = start; i < start + pageSize - 1; i++)
        if (file[i] === id >> 8 && file[i + 1] === (id & 0xff)) offsets.push(i + 1);
    }
    return offsets;
  }

  it("a row the key now places in a later page's range is refused there, never served twice", async () => {
    // Entry 1586's key in the index made 1594 (bit 3 of its low byte): a paged
    // ascending scan that resumes after 1590 is sent to it again.
    const offsets = keyBytes(pristine, 1586);
    expect(offsets.length).toBeGreaterThan(0);
    let refusedByScan = 0;
    for (const offset of offsets) {
      const path = copy();
      flipBit(path, offset, 3);
      const storage = await open(path, "none");
      const problems = await verifyLedger(storage, ledger).catch((error: unknown) => {
        expect(error).toBeInstanceOf(StorageCorrupted);
        if ((error as StorageCorrupted).location.table === "entries") refusedByScan++;
        return [];
      });
      // Never a silent difference: exact, or StorageCorrupted.
      expect(problems, `byte ${offset}`).toEqual([]);
      await storage.close();
    }
    expect(refusedByScan).toBeGreaterThan(0);
  });
});
