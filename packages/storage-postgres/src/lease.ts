import { StorageLocked } from "@durably/core";
import type { PoolClient } from "pg";

/**
 * Ownership of one session in a shared database, on the connection that
 * will run the session's commits:
 *
 * - the lease row (`sessions`): owner, fencing token, expiry by the
 *   server's clock. Each take-over increments the token, and every commit
 *   transaction checks it first (`fence`), so an old owner that was paused or
 *   cut off can never write after a new one took over;
 * - a session-level advisory lock held by the owner's connection. The server
 *   drops it the moment that connection dies (a SIGKILLed process, a closed
 *   socket), so a dead owner does not block the next open for the rest of its
 *   lease. A live but unresponsive owner (SIGSTOP, a partition) keeps it, and
 *   is waited out until its lease expires.
 */
export interface Lease {
  readonly token: number;
  readonly nextSeq: number;
  readonly highWater: number;
  /** This connection holds the liveness lock (it may not, after taking over from a stopped owner). */
  locked: boolean;
}

export interface LeaseSettings {
  schema: string;
  session: string;
  owner: string;
  leaseMs: number;
}

/** The advisory lock key of a session's owner connection. */
function ownerLockKey(schema: string, session: string): string {
  return `durably:owner:${schema}:${session}`;
}

async function tryOwnerLock(client: PoolClient, settings: LeaseSettings): Promise<boolean> {
  const result = await client.query<{ locked: boolean }>(
    "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked",
    [ownerLockKey(settings.schema, settings.session)],
  );
  return result.rows[0]?.locked === true;
}

/**
 * How long an open waits for a live-looking holder's liveness lock to drop.
 * A SIGKILLed owner's socket is closed by the kernel at once, but its server
 * backend notices and exits (releasing the lock) only when it is next
 * scheduled; on a loaded server that takes a moment. Waiting briefly turns a
 * dead owner into an immediate take-over instead of a wait for its lease.
 */
const HOLDER_EXIT_WAIT_MS = 2_000;
const HOLDER_EXIT_POLL_MS = 50;

/**
 * The liveness lock, waiting up to HOLDER_EXIT_WAIT_MS while the lease row
 * says its holder has the lock and the lease is live (its backend may be
 * exiting). Returns false when the lock stays held, or when waiting cannot
 * help (no live holder that claims the lock).
 */
async function ownerLockOnceHolderGone(
  client: PoolClient,
  settings: LeaseSettings,
): Promise<boolean> {
  const deadline = Date.now() + HOLDER_EXIT_WAIT_MS;
  for (;;) {
    if (await tryOwnerLock(client, settings)) return true;
    if (Date.now() >= deadline) return false;
    const holder = await client.query<{ waiting_helps: boolean }>(
      `SELECT lease_owner IS NOT NULL AND lease_locked AND lease_expires_at > now() AS waiting_helps
         FROM ${settings.schema}.sessions WHERE session_key = $1`,
      [settings.session],
    );
    if (holder.rows[0]?.waiting_helps !== true) return false;
    await new Promise((resolve) => setTimeout(resolve, HOLDER_EXIT_POLL_MS));
  }
}

/**
 * Takes the session's lease, creating the session on first use. It
 * succeeds when nobody holds the lease, when the lease expired, or when the
 * holder's connection is gone (its liveness lock is free); otherwise it
 * fails with `StorageLocked` naming the holder, and changes nothing.
 */
export async function acquireLease(client: PoolClient, settings: LeaseSettings): Promise<Lease> {
  const { schema: s, session, owner, leaseMs } = settings;
  const locked = await ownerLockOnceHolderGone(client, settings);
  const taken = await client.query<{ lease_token: number; next_seq: number; high_water: number }>({
    text: `INSERT INTO ${s}.sessions AS held (session_key, next_seq, high_water, lease_owner, lease_token, lease_locked, lease_expires_at)
        VALUES ($1, 1, 1, $2, 1, $3, now() + $4 * interval '1 millisecond')
        ON CONFLICT (session_key) DO UPDATE SET
          lease_owner = excluded.lease_owner,
          lease_token = held.lease_token + 1,
          lease_locked = excluded.lease_locked,
          lease_expires_at = excluded.lease_expires_at
        WHERE held.lease_owner IS NULL OR held.lease_expires_at <= now() OR (held.lease_locked AND $3)
        RETURNING lease_token::float8 AS lease_token, next_seq::float8 AS next_seq, high_water::float8 AS high_water`,
    values: [session, owner, locked, leaseMs],
  });
  const row = taken.rows[0];
  if (row !== undefined)
    return { token: row.lease_token, nextSeq: row.next_seq, highWater: row.high_water, locked };
  if (locked) await releaseOwnerLock(client, settings);
  const holder = await client.query<{ lease_owner: string | null; remaining_ms: number }>(
    `SELECT lease_owner, greatest(0, extract(epoch FROM lease_expires_at - now()) * 1000)::float8 AS remaining_ms
       FROM ${s}.sessions WHERE session_key = $1`,
    [session],
  );
  const h = holder.rows[0];
  throw new StorageLocked(
    `session ${JSON.stringify(session)} in schema ${s} is owned by ${h?.lease_owner ?? "another process"} ` +
      `(lease live for ${Math.ceil(h?.remaining_ms ?? 0)} ms more); close it there, or wait for its lease to expire`,
    { holder: h?.lease_owner ?? undefined },
  );
}

/**
 * Extends the lease by `leaseMs` from now (server clock). Returns false when
 * the token no longer holds the session: another owner took over.
 * An owner without the liveness lock tries to get it again on each renewal.
 */
export async function renewLease(
  client: PoolClient,
  settings: LeaseSettings,
  lease: Lease,
): Promise<boolean> {
  const { schema: s, session, leaseMs } = settings;
  if (!lease.locked) lease.locked = await tryOwnerLock(client, settings);
  const result = await client.query(
    `UPDATE ${s}.sessions SET lease_expires_at = now() + $3 * interval '1 millisecond', lease_locked = $4
      WHERE session_key = $1 AND lease_token = $2`,
    [session, lease.token, leaseMs, lease.locked],
  );
  return result.rowCount === 1;
}

/** Gives the lease up (keeping the token, so the next owner's is higher). */
export async function releaseLease(
  client: PoolClient,
  settings: LeaseSettings,
  lease: Lease,
): Promise<void> {
  const { schema: s, session } = settings;
  await client.query(
    `UPDATE ${s}.sessions SET lease_owner = NULL, lease_locked = FALSE, lease_expires_at = now()
      WHERE session_key = $1 AND lease_token = $2`,
    [session, lease.token],
  );
  if (lease.locked) await releaseOwnerLock(client, settings);
}

async function releaseOwnerLock(client: PoolClient, settings: LeaseSettings): Promise<void> {
  await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [
    ownerLockKey(settings.schema, settings.session),
  ]);
}
