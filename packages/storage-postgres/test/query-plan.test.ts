import { exerciseAccessPaths } from "@durably/contract-tests";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStorage, type PostgresStorage } from "../src/index.js";
import { freshSession, PG_URL, SKIP_REASON, testPool } from "./support/server.js";

/** Tables that grow with use; a sequential scan of any of them is a bug. */
const GROWING = [
  "conversations",
  "entries",
  "tasks",
  "submissions",
  "documents",
  "document_revisions",
  "sessions",
];

interface Recorded {
  text: string;
  values: unknown[] | undefined;
}

/** A pool that records the statements the storage sends, on pooled reads and on its owner connection. */
class RecordingPool extends pg.Pool {
  readonly statements: Recorded[] = [];
  override query(...args: unknown[]): never {
    this.#record(args[0], args[1]);
    return (super.query as (...a: unknown[]) => never)(...args);
  }
  override connect(...args: unknown[]): never {
    const patch = (client: pg.PoolClient) => {
      const query = client.query.bind(client) as (...a: unknown[]) => unknown;
      (client as { query: unknown }).query = (...a: unknown[]) => {
        this.#record(a[0], a[1]);
        return query(...a);
      };
      return client;
    };
    const connect = (...a: unknown[]) =>
      (super.connect as (...b: unknown[]) => unknown).apply(this, a);
    const callback = args[0];
    if (typeof callback === "function")
      // pool.query() checks a client out this way; its statements are recorded by query() above.
      return connect(callback) as never;
    return (connect() as Promise<pg.PoolClient>).then(patch) as never;
  }
  #record(first: unknown, second: unknown): void {
    const config =
      typeof first === "string" ? { text: first, values: second } : (first as Recorded);
    // Commit scripts are several statements; each is planned on its own. A migration that
    // creates a function is kept whole: the statements of its body are not statements sent.
    const parts = /LANGUAGE plpgsql/i.test(config.text) ? [config.text] : config.text.split(";\n");
    for (const text of parts)
      this.statements.push({ text, values: config.values as unknown[] | undefined });
  }
}

let pool: RecordingPool;
let storage: PostgresStorage;
const inspector = PG_URL ? testPool() : undefined;

beforeAll(async () => {
  if (!PG_URL) return;
  pool = new RecordingPool({ connectionString: PG_URL, max: 2 });
  storage = await openPostgresStorage({ pool, session: freshSession("plan") });
  await exerciseAccessPaths(storage);
});

afterAll(async () => {
  if (!PG_URL) return;
  await storage.close();
  await pool.end();
  await inspector?.end();
});

/** Sequential scans of growing tables in the plan of `text`, with the planner told to avoid them wherever an index can serve. */
async function seqScans(text: string, values: unknown[] | undefined): Promise<string[]> {
  const client = await inspector!.connect();
  try {
    await client.query("BEGIN");
    await client.query("SET LOCAL enable_seqscan = off");
    const plan = await client.query<{ "QUERY PLAN": unknown }>(
      `EXPLAIN (FORMAT JSON) ${text}`,
      values,
    );
    const found: string[] = [];
    const walk = (node: Record<string, unknown>) => {
      if (node["Node Type"] === "Seq Scan" && GROWING.includes(node["Relation Name"] as string))
        found.push(`Seq Scan on ${String(node["Relation Name"])}\n    in: ${text.slice(0, 300)}`);
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    for (const root of plan.rows[0]!["QUERY PLAN"] as { Plan: Record<string, unknown> }[])
      walk(root.Plan);
    return found;
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
}

describe.skipIf(!PG_URL)("PostgresStorage > EXPLAIN", () => {
  it("the check itself flags a sequential scan", async () => {
    expect(
      await seqScans("SELECT * FROM durably.entries WHERE record LIKE '%x%'", undefined),
    ).toHaveLength(1);
  });

  it("every statement the storage runs reads growing tables by index, never a sequential scan", async () => {
    const distinct = new Map<string, Recorded>();
    for (const s of pool.statements)
      if (
        /^\s*(SELECT|INSERT|UPDATE|DELETE)\b/i.test(s.text) &&
        !/pg_(try_)?advisory|set_config|fence\(/.test(s.text)
      )
        distinct.set(s.text.replace(/VALUES \(.*\)/s, "VALUES"), s);
    expect(distinct.size).toBeGreaterThan(40);
    // The fixture reaches the entry ranges (unbounded, bounded) and the scans' next pages, whose
    // statements bound the id from the cursor where first pages do not.
    const texts = [...distinct.keys()];
    for (const shape of [
      /\.entries WHERE session_key = \$1 AND conversation_id = \$2 ORDER BY id/,
      /\.entries WHERE session_key = \$1 AND conversation_id = \$2 AND id > \$3 AND id <= \$4 ORDER BY id/,
      /\.conversations WHERE session_key = \$1 AND id > \$2 ORDER BY id ASC/,
      /\.tasks WHERE session_key = \$1 AND id < \$2 ORDER BY id DESC/,
      /\.documents WHERE .* AND id > \$\d+ ORDER BY id ASC/,
    ])
      expect(
        texts.some((text) => shape.test(text)),
        String(shape),
      ).toBe(true);
    const offenders: string[] = [];
    for (const { text, values } of distinct.values())
      offenders.push(...(await seqScans(text, values)));
    expect(offenders).toEqual([]);
  });

  it("the row change inside fence_round, which rounds run in both modes, is an index lookup", async () => {
    // Read from the installed function, so the check follows what the schema really runs.
    const { rows } = await inspector!.query<{ prosrc: string }>(
      "SELECT prosrc FROM pg_proc WHERE proname = 'fence_round'",
    );
    const update = /UPDATE[\s\S]*?;/.exec(rows[0]?.prosrc ?? "")?.[0];
    expect(update).toBeDefined();
    const text = update!
      .replace(/;$/, "")
      .replaceAll("p_sessions[i]", "$1::text")
      .replaceAll("p_tokens[i]", "$2::bigint")
      .replaceAll("p_next_seqs[i]", "$3::bigint")
      .replaceAll("p_high_waters[i]", "$4::bigint");
    expect(text).not.toMatch(/p_\w+\[i\]/);
    expect(await seqScans(text, ["plan", 1, 2, null])).toEqual([]);
  });
});

if (!PG_URL) it.skip(`EXPLAIN: ${SKIP_REASON}`, () => undefined);
