import { StorageLocked } from "@durably/core";
import type { Pool, PoolClient } from "pg";
import { checkSessionRow, sessionCountersSql } from "./bigint-range.js";
import { query, type Runner } from "./queries.js";

/**
 * Ownership of sessions by a host (see host.ts):
 *
 * - each session keeps its own lease row (`sessions`): owner, fencing token,
 *   expiry by the server's clock, and `lease_host`, the host holding it.
 *   Each take-over increments the token, and every transaction writing the
 *   session checks it first (`fence`), so an old owner that was paused or cut
 *   off can never write after a new one took over;
 * - ONE session-level advisory lock per host, held by the host's dedicated
 *   liveness connection. The server drops it the moment that connection
 *   dies (a SIGKILLed process, a closed socket), so a take-over probes the
 *   holder host's lock and, finding it free, does not wait for the lease. A
 *   live but unresponsive host (SIGSTOP, a partition) keeps it, and is
 *   waited out until its leases expire.
 */
export interface SessionLease {
  readonly token: number;
  readonly nextSeq: number;
  readonly highWater: number;
}

export interface HostIdentity {
  readonly schema: string;
  /** Random per host: its liveness lock's key, and `lease_host` in the rows it holds. */
  readonly hostId: string;
  /** Names the host in lease rows and in `StorageLocked` messages. */
  readonly owner: string;
  readonly leaseMs: number;
}

/** Prefix of a host's liveness lock key; the host id follows. */
function hostLockPrefix(schema: string): string {
  return `durably:host:${schema}:`;
}

/**
 * Prefix of the per-session liveness lock key of releases before hosts
 * (the session key follows). A row such an owner holds (`lease_host` NULL,
 * `lease_locked`) is probed with it, so a process of the previous release
 * that is still running keeps its sessions until it dies or its lease ends.
 */
function legacyLockPrefix(schema: string): string {
  return `durably:owner:${schema}:`;
}

export function hostLockKey(schema: string, hostId: string): string {
  return `${hostLockPrefix(schema)}${hostId}`;
}

/** Takes the host's liveness lock on its dedicated connection; its id is fresh, so it is free. */
export async function takeHostLock(client: PoolClient, host: HostIdentity): Promise<void> {
  const r = await client.query<{ locked: boolean }>(
    "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked",
    [hostLockKey(host.schema, host.hostId)],
  );
  if (r.rows[0]?.locked !== true)
    throw new StorageLocked(
      `host ${host.owner}: its liveness lock ${hostLockKey(host.schema, host.hostId)} is held by another connection`,
    );
}

/**
 * How long an open waits for a live-looking holder's liveness lock to drop.
 * A SIGKILLed host's socket is closed by the kernel at once, but its server
 * backend notices and exits (releasing the lock) only when it is next
 * scheduled; on a loaded server that takes a moment. Waiting briefly turns a
 * dead host into an immediate take-over instead of a wait for its lease.
 */
const HOLDER_EXIT_WAIT_MS = 2_000;
const HOLDER_EXIT_POLL_MS = 50;

/**
 * One statement, so the probe and the take-over are one transaction: the
 * row is locked by ON CONFLICT before its WHERE runs (a take-over waits for
 * a commit already past its fence), and `pg_try_advisory_xact_lock` succeeds
 * only when no connection holds the holder's liveness lock (a dead host),
 * and is released at once when the statement ends. It must never run on a
 * connection that holds a liveness lock itself (it would re-enter it): it
 * runs on pooled connections, and liveness connections are never pooled.
 * A row whose counters are beyond the safe integers (damaged) is not taken
 * either, so it is left as it was; the caller then reports it. The counters
 * come back as bigints, never `float8`, which would round them.
 */
function takeSql(s: string): string {
  return `INSERT INTO ${s}.sessions AS held (session_key, next_seq, high_water, lease_owner, lease_token, lease_locked, lease_expires_at, lease_host)
        VALUES ($1, 1, 1, $2, 1, FALSE, now() + $3 * interval '1 millisecond', $4)
        ON CONFLICT (session_key) DO UPDATE SET
          lease_owner = excluded.lease_owner,
          lease_token = held.lease_token + 1,
          lease_locked = FALSE,
          lease_expires_at = excluded.lease_expires_at,
          lease_host = excluded.lease_host
        WHERE (held.lease_owner IS NULL OR held.lease_expires_at <= now()
          OR (held.lease_host IS NOT NULL AND pg_try_advisory_xact_lock(hashtextextended($5::text || held.lease_host, 0)))
          OR (held.lease_host IS NULL AND held.lease_locked AND pg_try_advisory_xact_lock(hashtextextended($6::text || held.session_key, 0))))
          AND ${sessionCountersSql("held")}
        RETURNING lease_token, next_seq, high_water`;
}

interface Holder {
  lease_owner: string | null;
  /** The counters as text, so a damaged one is reported, never rounded. */
  lease_token: string;
  next_seq: string;
  high_water: string;
  remaining_ms: number;
  /** The lease is live and its holder claims a liveness lock, which may be about to drop. */
  waiting_helps: boolean;
}

/**
 * Takes `session`'s lease for `host`, creating the session on first use.
 * It succeeds when nobody holds the lease, when it expired, or when the
 * holder host's liveness lock is free (the host is gone); otherwise it
 * fails with `StorageLocked` naming the holder, and changes nothing. A row
 * whose counters are beyond the safe integers fails with `StorageCorrupted`
 * naming the session and column, and is left as it was.
 */
export async function acquireSessionLease(
  pool: Pool,
  host: HostIdentity,
  session: string,
): Promise<SessionLease> {
  const { schema: s } = host;
  const deadline = Date.now() + HOLDER_EXIT_WAIT_MS;
  for (;;) {
    const taken = await query<{ lease_token: number; next_seq: number; high_water: number }>(
      pool,
      takeSql(s),
      [session, host.owner, host.leaseMs, host.hostId, hostLockPrefix(s), legacyLockPrefix(s)],
    );
    const row = taken.rows[0];
    if (row !== undefined)
      return { token: row.lease_token, nextSeq: row.next_seq, highWater: row.high_water };
    const found = await query<Holder>(
      pool,
      `SELECT lease_owner, lease_token::text AS lease_token, next_seq::text AS next_seq, high_water::text AS high_water,
              greatest(0, extract(epoch FROM lease_expires_at - now()) * 1000)::float8 AS remaining_ms,
              lease_owner IS NOT NULL AND (lease_host IS NOT NULL OR lease_locked) AND lease_expires_at > now() AS waiting_helps
         FROM ${s}.sessions WHERE session_key = $1`,
      [session],
    );
    const h = found.rows[0];
    if (h !== undefined) checkSessionRow(session, h);
    if (h?.waiting_helps === true && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, HOLDER_EXIT_POLL_MS));
      continue;
    }
    throw new StorageLocked(
      `session ${JSON.stringify(session)} in schema ${s} is owned by ${h?.lease_owner ?? "another process"} ` +
        `(lease live for ${Math.ceil(h?.remaining_ms ?? 0)} ms more); close it there, or wait for its lease to expire`,
      { holder: h?.lease_owner ?? undefined },
    );
  }
}

/**
 * Extends by `leaseMs` from now (server clock) the lease of every session in
 * `held` whose token still holds it, in ONE statement, and returns the keys
 * it renewed: a session missing from the answer was taken over. Rows are
 * locked in `session_key` byte order (COLLATE "C"), the order group-commit
 * rounds lock them in, so a renewal and a round never deadlock.
 */
export async function renewSessionLeases(
  runner: Runner,
  host: HostIdentity,
  held: readonly { session: string; token: number }[],
): Promise<Set<string>> {
  const s = host.schema;
  const r = await query<{ session_key: string }>(
    runner,
    `WITH mine AS (
       SELECT t.session_key FROM ${s}.sessions t
         JOIN unnest($1::text[], $2::bigint[]) AS m(session_key, token)
           ON t.session_key = m.session_key AND t.lease_token = m.token
        WHERE t.lease_owner IS NOT NULL
        ORDER BY t.session_key COLLATE "C"
        FOR UPDATE OF t
     )
     UPDATE ${s}.sessions u SET lease_expires_at = now() + $3 * interval '1 millisecond'
       FROM mine WHERE u.session_key = mine.session_key
     RETURNING u.session_key`,
    [held.map((h) => h.session), held.map((h) => h.token), host.leaseMs],
  );
  return new Set(r.rows.map((row) => row.session_key));
}

/** Gives a session's lease up (keeping the token, so the next owner's is higher). */
export async function releaseSessionLease(
  runner: Runner,
  schema: string,
  session: string,
  token: number,
): Promise<void> {
  await query(
    runner,
    `UPDATE ${schema}.sessions SET lease_owner = NULL, lease_host = NULL, lease_locked = FALSE, lease_expires_at = now()
      WHERE session_key = $1 AND lease_token = $2`,
    [session, token],
  );
}
