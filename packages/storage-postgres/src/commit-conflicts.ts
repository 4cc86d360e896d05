import type { StorageWrite } from "@durably/core";
import { scopeKey, type WriteConflict } from "@durably/core/storage";
import { query, type Runner } from "./queries.js";
import { exactText } from "./sql-literals.js";

/**
 * Names the write of a batch that hit a unique index, after the batch was
 * rolled back to its savepoint: the database then holds exactly what the
 * earlier batches left, so asking it which id or address is taken answers
 * the way a per-write check would have. Returns undefined for a constraint
 * a conflict does not explain (the caller then fails the commit).
 */
export async function identifyConflict(
  client: Runner,
  schema: string,
  session: string,
  batchIndex: number,
  writes: readonly StorageWrite[],
  constraint: string | undefined,
): Promise<WriteConflict | undefined> {
  const s = schema;
  const pick = <T>(type: (w: StorageWrite) => T | undefined) =>
    writes.flatMap((w, index) => {
      const value = type(w);
      return value === undefined ? [] : [{ index, value }];
    });
  const at = (writeIndex: number, kind: WriteConflict["kind"], holder?: number) => ({
    batchIndex,
    writeIndex,
    kind,
    ...(holder === undefined ? {} : { holder }),
  });
  if (constraint === "entries_pkey" || constraint === "conversations_pkey") {
    const table = constraint === "entries_pkey" ? "entries" : "conversations";
    const kind = constraint === "entries_pkey" ? "entry" : "conversation";
    const candidates = pick((w) => (w.type === kind ? (w.value as { id: number }).id : undefined));
    const stored = await query<{ id: number }>(
      client,
      `SELECT id FROM ${s}.${table} WHERE session_key = $1 AND id = ANY($2::bigint[])`,
      [session, candidates.map((c) => c.value)],
    );
    const taken = new Set(stored.rows.map((r) => r.id));
    const hit = candidates.find((c) => taken.has(c.value));
    return hit && at(hit.index, kind === "entry" ? "entry-exists" : "conversation-exists");
  }
  const created = pick((w) =>
    w.type === "document.create" || w.type === "document.copy" ? w.record : undefined,
  );
  if (constraint === "documents_pkey") {
    const stored = await query<{ id: number }>(
      client,
      `SELECT id FROM ${s}.documents WHERE session_key = $1 AND id = ANY($2::bigint[])`,
      [session, created.map((c) => c.value.id)],
    );
    const taken = new Set(stored.rows.map((r) => r.id));
    const hit = created.find((c) => taken.has(c.value.id));
    return hit && at(hit.index, "document-exists");
  }
  if (constraint === "documents_live_address")
    for (const { index, value: record } of created) {
      const address = [
        exactText(record.kind),
        scopeKey(record.scope),
        record.key === undefined ? "" : exactText(record.key),
      ];
      const occupant = await query<{ id: number }>(
        client,
        `SELECT id FROM ${s}.documents WHERE session_key = $1 AND kind = $2 AND scope = $3 AND key_json = $4 AND retired_at IS NULL`,
        [session, ...address],
      );
      const live = occupant.rows[0]?.id;
      if (live !== undefined) return at(index, "address-occupied", live);
    }
  return undefined;
}
