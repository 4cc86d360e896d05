import { StorageCorrupted } from "@durably/core";
import { CHAIN_START, decodeCounters } from "./commit-chain.js";
import { unframe } from "./framing.js";
import { K } from "./keys.js";
import type { LevelDirectory } from "./level-directory.js";
import { ioError, translate } from "./level-errors.js";
import { KEPT_FOLDER } from "./level-evidence.js";
import type { CommitPoint, KeptLog } from "./level-logs.js";
import type { LogWrite } from "./log-commits.js";
import { join, type SyncFs } from "./node-fs.js";

/**
 * After LevelDB opened an existing database: does it serve the newest
 * commit its write-ahead logs held before the open? LevelDB goes on without
 * a log it fails to open or read (and deletes it), so an open can succeed
 * without the newest acknowledged commits, and the next commit would reuse
 * their seqs and ids. Checked against what the logs said before the open
 * (`inspectLevelDirectory`):
 *
 * - A live log of this open whose commits are missing: the open fails with
 *   `StorageIOError` naming the log and the missing seqs. The log's copy
 *   stays kept (see `level-evidence`).
 * - Commits only a kept copy holds (an earlier open failed that way): they
 *   are written again, in their order, when they continue exactly the
 *   commit the database serves; otherwise `StorageCorrupted`, nothing
 *   written.
 */

/** The database as this check uses it: raw bytes in and out. */
export interface RecoveringDatabase {
  get(key: string, options: { keyEncoding: "utf8"; valueEncoding: "utf8" }): Promise<unknown>;
  batch(
    operations: (
      { type: "put"; key: Uint8Array; value: Uint8Array } | { type: "del"; key: Uint8Array }
    )[],
    options: { keyEncoding: "view"; valueEncoding: "view"; sync: boolean },
  ): Promise<void>;
}

/** The commit the opened database serves: its counters, or the empty store's. */
async function served(db: RecoveringDatabase, location: string): Promise<CommitPoint> {
  let raw: unknown;
  try {
    raw = await db.get(K.counters, { keyEncoding: "utf8", valueEncoding: "utf8" });
  } catch (error) {
    throw translate(error, "a read", { location, key: K.counters }, "read");
  }
  if (raw === undefined) return { seq: 0, link: CHAIN_START };
  if (typeof raw !== "string")
    throw new StorageCorrupted(`key ${K.counters}: the database returned no text`, {
      key: K.counters,
    });
  const counters = decodeCounters(unframe(K.counters, raw));
  return { seq: counters.seq, link: counters.link };
}

function seqs(first: number, last: number): string {
  return first === last ? `the commit of seq ${first}` : `the commits of seqs ${first} to ${last}`;
}

/** LevelDB's own account of a log it skipped, from its info log (`LOG`), if it wrote one. */
function reasonFromInfoLog(fs: SyncFs, location: string, log: string): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(join(location, "LOG"), "utf8");
  } catch {
    return undefined;
  }
  const lines = text.split("\n").filter((line) => line.includes(log) && /error/i.test(line));
  const line = lines.at(-1);
  // Drop LevelDB's timestamp and thread id.
  return line?.replace(/^\S+ \S+ /, "");
}

export async function verifyReplay(
  db: RecoveringDatabase,
  fs: SyncFs,
  location: string,
  directory: LevelDirectory,
): Promise<void> {
  const points = [...directory.live, ...directory.kept].flatMap((log) =>
    log.newest === undefined ? [] : [log.newest.seq],
  );
  if (points.length === 0) return;
  const expected = Math.max(...points);
  const now = await served(db, location);
  if (now.seq >= expected) return;

  const skipped = directory.live.find((log) => (log.newest?.seq ?? 0) > now.seq);
  if (skipped !== undefined) {
    const reason = reasonFromInfoLog(fs, location, skipped.name);
    const last = skipped.newest?.seq ?? expected;
    throw ioError(
      `${skipped.file}: LevelDB opened the database without replaying this write-ahead log` +
        (reason === undefined ? "" : ` (its info log says: ${reason})`) +
        `: ${seqs(now.seq + 1, last)}, which the log held before the open, ${now.seq + 1 === last ? "is" : "are"} missing from what it serves (seq ${now.seq}). ` +
        `LevelDB has deleted the log; a copy is kept in ${join(location, KEPT_FOLDER)}, and the next open writes ${now.seq + 1 === last ? "that commit" : "those commits"} again from it.`,
      reason === undefined ? undefined : new Error(reason),
      { file: skipped.file, seq: now.seq + 1 },
    );
  }
  await restore(db, location, directory.kept, now, expected);
  const after = await served(db, location);
  if (after.seq < expected)
    throw new StorageCorrupted(
      `${join(location, KEPT_FOLDER)}: after writing again the commits the kept logs hold, the database serves seq ${after.seq}, not ${expected}`,
      { file: join(location, KEPT_FOLDER), seq: after.seq + 1 },
    );
}

/** Writes again, in order, every write of the kept logs after the commit the database serves. */
async function restore(
  db: RecoveringDatabase,
  location: string,
  kept: readonly KeptLog[],
  now: CommitPoint,
  expected: number,
): Promise<void> {
  const writes: { log: KeptLog; write: LogWrite }[] = kept.flatMap((log) =>
    log.writes.map((write) => ({ log, write })),
  );
  const start = writes.findIndex(({ write }) => (write.counters?.seq ?? 0) > now.seq);
  const first = writes[start];
  const marker = first?.write.marker;
  if (first === undefined || marker?.first !== now.seq + 1 || marker.prev !== now.link) {
    const where = first?.log.file ?? join(location, KEPT_FOLDER);
    throw new StorageCorrupted(
      `${where}: the kept copy of a write-ahead log holds commits up to seq ${expected}, but they do not continue the commit the database serves ` +
        `(seq ${now.seq}, link ${now.link}; the kept write ${marker === undefined ? "has no commit marker" : `has marker ${marker.key} linking to ${marker.prev}`}). ` +
        `Nothing was written: the copies are from another history of this directory, or commits between are lost. Move ${join(location, KEPT_FOLDER)} aside to open the store as it is.`,
      { file: where, seq: now.seq + 1 },
    );
  }
  for (const { log, write } of writes.slice(start)) {
    try {
      await db.batch(
        write.ops.map((op) =>
          op.type === "put"
            ? { type: "put", key: op.key, value: op.value }
            : { type: "del", key: op.key },
        ),
        // Synced: the copies are removed once the open is verified.
        { keyEncoding: "view", valueEncoding: "view", sync: true },
      );
    } catch (error) {
      // The open fails; the copies stay, and the next open goes on from what landed.
      throw translate(error, `writing again the commits kept in ${log.file}`, { location }, "open");
    }
  }
}
