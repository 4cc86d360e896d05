import type { CommitOp } from "./commit-ops.js";

/**
 * One session's call as the `commit_calls` function takes it: session key,
 * lease token, the next seq and high-water mark to store after it (`h` null
 * to leave the mark), and its row changes in order.
 */
export interface CallArgument {
  k: string;
  t: number;
  n: number;
  h: number | null;
  o: CommitOp[];
}

/** The statement a round sends instead of a script: bound parameters, one statement, one round trip. */
export function commitCallsSql(schema: string): string {
  return `SELECT ${schema}.commit_calls($1::jsonb)`;
}

/**
 * The schema function applying a round's calls as schema version 3
 * shipped it: for each call the fence, its row changes, its counters.
 * Kept as it was (a shipped migration is never edited); version 4
 * replaces it with `commitCallsFunction`.
 */
export function commitCallsFunctionV3(s: string): string {
  return `
    CREATE FUNCTION ${s}.commit_calls(p_calls jsonb) RETURNS void
    LANGUAGE plpgsql AS $commit$
    DECLARE
      c jsonb;
      o jsonb;
      k text;
    BEGIN
      FOR c IN SELECT value FROM jsonb_array_elements(p_calls) LOOP
        k := c->>'k';
        PERFORM ${s}.fence(k, (c->>'t')::bigint);
${applyOps(s)}        UPDATE ${s}.sessions SET next_seq = (c->>'n')::bigint, high_water = coalesce((c->>'h')::bigint, high_water)
         WHERE session_key = k;
      END LOOP;
    END
    $commit$;`;
}

/**
 * The schema function applying a round's calls (schema version 4): ONE
 * statement (`fence_round`) fencing every call's session and storing its
 * counters (updating their rows in the order of the argument, which is
 * session-key byte order), then the calls' row changes in order. The same
 * changes as the literal scripts (commit-statements.ts, `roundFenceSql`),
 * with values read from the JSON argument instead of
 * inlined, so the round is sent with bound parameters. Every string it
 * stores arrives as a JSON string holding no U+0000 (records and lookup
 * columns are JSON text, which escapes it), which jsonb accepts. A fence
 * that fails fails the whole statement; the round is then replayed session
 * by session, so the fenced one fails alone.
 */
export function commitCallsFunction(s: string): string {
  return `
    CREATE OR REPLACE FUNCTION ${s}.commit_calls(p_calls jsonb) RETURNS void
    LANGUAGE plpgsql AS $commit$
    DECLARE
      c jsonb;
      o jsonb;
      k text;
    BEGIN
      -- Every session fenced and its counters stored in ONE statement, in the calls' order
      -- (session-key byte order, so rows are locked in that order); raises if any lease moved.
      PERFORM ${s}.fence_round(
        array_agg(e.value->>'k' ORDER BY e.i), array_agg((e.value->>'t')::bigint ORDER BY e.i),
        array_agg((e.value->>'n')::bigint ORDER BY e.i), array_agg((e.value->>'h')::bigint ORDER BY e.i))
        FROM jsonb_array_elements(p_calls) WITH ORDINALITY AS e(value, i);
      FOR c IN SELECT value FROM jsonb_array_elements(p_calls) LOOP
        k := c->>'k';
${applyOps(s)}      END LOOP;
    END
    $commit$;`;
}

/** The loop applying one call's row changes (`o`) to session `k`, shared by both versions of the function. */
function applyOps(s: string): string {
  return `        FOR o IN SELECT value FROM jsonb_array_elements(c->'o') LOOP
          CASE o->>0
            WHEN 'conversation' THEN
              INSERT INTO ${s}.conversations (session_key, id, owner_task_id, record)
              VALUES (k, (o->>1)::bigint, (o->>2)::bigint, o->>3);
            WHEN 'entry' THEN
              INSERT INTO ${s}.entries (session_key, id, conversation_id, commit_seq, is_head, record)
              VALUES (k, (o->>1)::bigint, (o->>2)::bigint, (o->>3)::bigint, (o->>4)::boolean, o->>5);
            WHEN 'task' THEN
              INSERT INTO ${s}.tasks AS t (session_key, id, conversation_id, kind, status, abort_requested, background, owner, record)
              VALUES (k, (o->>1)::bigint, (o->>2)::bigint, o->>3, o->>4, (o->>5)::boolean, (o->>6)::boolean, (o->>7)::bigint, o->>8)
              ON CONFLICT (session_key, id) DO UPDATE SET conversation_id = excluded.conversation_id, kind = excluded.kind, status = excluded.status, abort_requested = excluded.abort_requested, background = excluded.background, owner = excluded.owner, record = excluded.record;
            WHEN 'submission' THEN
              INSERT INTO ${s}.submissions (session_key, id, conversation_id, status, request_json, record)
              VALUES (k, (o->>1)::bigint, (o->>2)::bigint, o->>3, o->>4, o->>5)
              ON CONFLICT (session_key, id) DO UPDATE SET conversation_id = excluded.conversation_id, status = excluded.status, request_json = excluded.request_json, record = excluded.record;
            WHEN 'document' THEN
              INSERT INTO ${s}.documents (session_key, id, kind, key_json, scope, rewindable, created_at, retired_at, version, base_seq, record)
              VALUES (k, (o->>1)::bigint, o->>2, o->>3, o->>4, (o->>5)::boolean, (o->>6)::bigint, NULL, (o->>7)::bigint, (o->>8)::bigint, o->>9);
            WHEN 'revision' THEN
              INSERT INTO ${s}.document_revisions (session_key, document_id, seq, kind, content, version)
              VALUES (k, (o->>1)::bigint, (o->>2)::bigint, o->>3, o->>4, (o->>5)::bigint);
            WHEN 'rebase' THEN
              UPDATE ${s}.documents SET version = (o->>2)::bigint, base_seq = (o->>3)::bigint
               WHERE session_key = k AND id = (o->>1)::bigint;
            WHEN 'trim' THEN
              DELETE FROM ${s}.document_revisions
               WHERE session_key = k AND document_id = (o->>1)::bigint AND seq < (o->>2)::bigint;
            WHEN 'retire' THEN
              UPDATE ${s}.documents SET retired_at = (o->>2)::bigint WHERE session_key = k AND id = (o->>1)::bigint;
            WHEN 'drop' THEN
              DELETE FROM ${s}.document_revisions WHERE session_key = k AND document_id = (o->>1)::bigint;
          END CASE;
        END LOOP;
`;
}

/**
 * `fence_round(keys, tokens, next seqs, high-water marks)` (schema version
 * 4): for each session in the order given, ONE row change storing its
 * counters where its lease token still holds (a mark of NULL leaves the
 * mark), which locks the row as `fence` does (a take-over waits for the
 * round; a round waits for a take-over and then sees its token). At the
 * first session whose lease moved, `fence` raises its `DU001` naming it.
 */
export function fenceRoundFunction(s: string): string {
  return `
    CREATE FUNCTION ${s}.fence_round(p_sessions text[], p_tokens bigint[], p_next_seqs bigint[], p_high_waters bigint[]) RETURNS void
    LANGUAGE plpgsql AS $fence_round$
    BEGIN
      FOR i IN 1 .. coalesce(array_length(p_sessions, 1), 0) LOOP
        UPDATE ${s}.sessions SET next_seq = p_next_seqs[i], high_water = coalesce(p_high_waters[i], high_water)
         WHERE session_key = p_sessions[i] AND lease_token = p_tokens[i] AND lease_owner IS NOT NULL;
        IF NOT FOUND THEN
          PERFORM ${s}.fence(p_sessions[i], p_tokens[i]);
          RAISE EXCEPTION 'durably session %: lease token % no longer holds it', p_sessions[i], p_tokens[i]
            USING ERRCODE = 'DU001';
        END IF;
      END LOOP;
    END
    $fence_round$;`;
}
