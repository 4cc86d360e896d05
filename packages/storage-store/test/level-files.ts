import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ClassicLevel } from "classic-level";
import type { ConversationId, Cursor, DocumentId, EntryId } from "@durably/core";
import { StoreStorage, levelStore, type LevelStoreOptions } from "../src/index.js";

/**
 * Helpers for tests that damage real LevelDB files: a known workload, a
 * read-back that says whether what came back is a prefix of it, and file
 * snapshots to prove a refused open touched nothing.
 */

export const A = 1 as ConversationId;
export const B = 2 as ConversationId;
export const DOC = 3 as DocumentId;
/** Commit `i`'s entry in conversation A (B's is one more). */
export const entryA = (i: number) => (2 + 2 * i) as EntryId;

/**
 * Commit 0 creates conversations A and B and a document; commit `i` (1..n)
 * appends entry `i` to A and to B and sets the document's `n` to `i`: three
 * key ranges per commit, so a half-stored commit shows.
 */
export async function writeCommits(
  location: string,
  n: number,
  options: { compact?: boolean; maxFileSize?: number } = {},
): Promise<void> {
  const db = new ClassicLevel(
    location,
    options.maxFileSize === undefined ? {} : { maxFileSize: options.maxFileSize },
  );
  const storage = await StoreStorage.open(levelStore(db));
  const none = () => undefined;
  await storage.commit(
    [
      [
        { type: "conversation", value: { id: A } },
        { type: "conversation", value: { id: B } },
        {
          type: "document.create",
          record: { id: DOC, kind: "test.counter", scope: { kind: "session" } },
          content: { kind: "base", version: 1, value: { n: 0 } },
        } as never,
      ],
    ],
    none,
  );
  await commitRange(storage, 1, n);
  // compactRange flushes the log into table files (.ldb) and merges them.
  if (options.compact)
    await (db as unknown as { compactRange(a: string, b: string): Promise<void> }).compactRange(
      "\x00",
      "\xff",
    );
  await storage.close();
}

/** Commits `from..to` of the workload (entry `i` in A and in B, the document's `n` set to `i`), one commit call each. */
export async function commitRange(storage: StoreStorage, from: number, to: number): Promise<void> {
  for (let i = from; i <= to; i++)
    await storage.commit(
      [
        [
          {
            type: "entry",
            value: {
              id: entryA(i),
              conversationId: A,
              kind: "n",
              data: { i, pad: "a".repeat(100) },
            },
          } as never,
          {
            type: "entry",
            value: { id: entryA(i) + 1, conversationId: B, kind: "n", data: { i } },
          } as never,
          {
            type: "document.change",
            id: DOC,
            content: { kind: "delta", version: 1, ops: [["s", ["n"], i]] },
          },
        ],
      ],
      () => undefined,
    );
}

/** Opens the store and commits `from..to` of the workload after the commits already there; they stay in LevelDB's log. */
export async function appendCommits(location: string, from: number, to: number): Promise<void> {
  const storage = await StoreStorage.open(levelStore(new ClassicLevel(location)));
  await commitRange(storage, from, to);
  await storage.close();
}

/** Opens and closes the store once: LevelDB turns its log into a table and starts a new log. */
export async function openOnce(location: string): Promise<void> {
  const storage = await StoreStorage.open(levelStore(new ClassicLevel(location)));
  await storage.close();
}

async function scanAll(storage: StoreStorage, conversationId: ConversationId): Promise<number[]> {
  const out: number[] = [];
  let cursor: Cursor | undefined;
  for (;;) {
    const page = await storage.scanEntries({ conversationId, order: "ascending" }, 100, cursor);
    for (const e of page.items) out.push((e.data as { i: number }).i);
    if (page.next === undefined) return out;
    cursor = page.next;
  }
}

/** What a reopen gave: the error it (or a read) rejected with, or the prefix length it returned. */
export type Outcome = { error: unknown } | { prefix: number };

/**
 * Opens and reads everything back: both conversations by scan, every entry
 * of A by id, the document. Returns the error if any step rejects. Throws
 * (fails the test) when the reads agree on no prefix 1..k: a hole or half a
 * commit.
 */
export async function reopenAndRead(
  location: string,
  n: number,
  options: LevelStoreOptions = {},
): Promise<Outcome> {
  let storage: StoreStorage;
  try {
    storage = await StoreStorage.open(levelStore(new ClassicLevel(location), options));
  } catch (error) {
    return { error };
  }
  try {
    const a = await scanAll(storage, A);
    const b = await scanAll(storage, B);
    const byId: number[] = [];
    for (let i = 1; i <= n; i++) if ((await storage.entry(entryA(i))) !== undefined) byId.push(i);
    const doc = await storage.document(DOC, "current");
    const k = a.length;
    const prefix = Array.from({ length: k }, (_x, i) => i + 1);
    const same = (xs: number[]) => xs.length === k && xs.every((x, i) => x === prefix[i]);
    const docN = (doc?.value as { n?: number } | undefined)?.n;
    if (!same(a) || !same(b) || !same(byId) || docN !== k)
      throw new Error(
        `not a prefix: conversation A has ${describe(a)}, B has ${describe(b)}, entry(id) finds ${describe(byId)}, the document says n=${String(docN)}`,
      );
    return { prefix: k };
  } catch (error) {
    if (error instanceof Error && error.message.startsWith("not a prefix")) throw error;
    return { error };
  } finally {
    await storage.close().catch(() => undefined);
  }
}

function describe(xs: number[]): string {
  const missing: number[] = [];
  const max = Math.max(0, ...xs);
  for (let i = 1; i <= max; i++) if (!xs.includes(i)) missing.push(i);
  return `${xs.length} commits up to ${max}${missing.length > 0 ? ` (missing ${missing.slice(0, 8).join(", ")}${missing.length > 8 ? ", …" : ""})` : ""}`;
}

/** Every file of a directory with its bytes. */
export function snapshot(dir: string): Map<string, Buffer> {
  return new Map(
    readdirSync(dir)
      .sort()
      .map((name) => [name, readFileSync(join(dir, name))]),
  );
}

/** Puts a directory back to a snapshot (and nothing else). */
export function restore(dir: string, files: Map<string, Buffer>): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  for (const [name, bytes] of files) writeFileSync(join(dir, name), bytes);
}

/** The largest file of `dir` whose name ends in `ext`. */
export function largest(dir: string, ext: string): string {
  const name = readdirSync(dir)
    .filter((f) => f.endsWith(ext))
    .sort((x, y) => statSync(join(dir, y)).size - statSync(join(dir, x)).size)[0];
  if (name === undefined)
    throw new Error(`no ${ext} file in ${dir}: ${readdirSync(dir).join(", ")}`);
  return join(dir, name);
}

export type Damage = "flip" | "zero-4k";

/** Flips one bit at `at`, or zeroes the 4 KiB-aligned block holding `at`; returns what it did. */
export function damage(file: string, kind: Damage, at: number, bit = 0): string {
  const bytes = readFileSync(file);
  if (kind === "flip") {
    bytes[at] = (bytes[at] as number) ^ (1 << bit);
    writeFileSync(file, bytes);
    return `bit ${bit} of byte ${at} flipped`;
  }
  const start = at - (at % 4096);
  bytes.fill(0, start, Math.min(bytes.length, start + 4096));
  writeFileSync(file, bytes);
  return `bytes ${start}..${Math.min(bytes.length, start + 4096) - 1} zeroed`;
}
