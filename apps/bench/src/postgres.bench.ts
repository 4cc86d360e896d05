// Commits/s on PostgreSQL over loopback: the Session on
// @durably/storage-postgres with 1 and 64 concurrent writers, next to raw `pg`
// writing the same rows one transaction per commit, in the same run; and
// through one PostgresHost, 1 session x 256 writers next to 64 sessions x 4
// writers (the same 256 writers spread over sessions, so the host's
// cross-session group commit has to do what one Session's does alone), and 4
// app-server processes with such a host each, committing at the same time.
//
//   node --conditions=@durably/source --import tsx apps/bench/src/postgres.bench.ts [--smoke]
//
// Uses DURABLY_PG_URL, else starts a throwaway cluster of the installed Debian
// server (as the storage-postgres tests do); with neither it says so and exits 0.
// Writes <repo>/bench-results/postgres.json (or BENCH_OUT) and prints a table.
import { cpus, loadavg } from "node:os";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { Session, type ConversationId } from "@durably/core";
import { openPostgresStorage } from "@durably/storage-postgres";
import { concurrentLoops } from "./harness.js";
import { openHostLoad } from "./postgres-host-load.js";
import { startHostProcesses } from "./postgres-host-processes.js";
import { median } from "./stats.js";
import { int, textTable, times } from "./table.js";
import {
  createWriterConversations,
  ENTRY_KIND,
  sessionStep,
  stepData,
  stepOps,
} from "./workload.js";
import {
  findServerBin,
  startCluster,
  stopCluster,
} from "../../../packages/storage-postgres/scripts/throwaway-cluster.mjs";
import { scriptFlags, writeReport } from "./script-flags.js";

const { smoke, outDir } = scriptFlags();
const ROUND_MS = smoke ? 150 : Number(process.env.BENCH_PG_ROUND_MS ?? 1500);
const ROUNDS = smoke ? 1 : 5;
const WRITERS = smoke ? 8 : 64;
/** Writers of the host cases, all in one session or spread over HOST_SESSIONS. */
const HOST_WRITERS = smoke ? 32 : 256;
const HOST_SESSIONS = smoke ? 8 : 64;
/** App-server processes of the multi-process case, each with a host of HOST_SESSIONS x 4 writers. */
const HOST_PROCESSES = smoke ? 2 : 4;

interface Case {
  id: string;
  label: string;
  writers: number;
  open(): Promise<{
    run(deadline: number): Promise<number>;
    stats?(): unknown;
    close(): Promise<void>;
  }>;
}

function durablyCase(url: string, writers: number): Case {
  return {
    id: `durably/${writers}`,
    label: `Session.commit on PostgresStorage, ${writers} writer${writers === 1 ? "" : "s"}`,
    writers,
    async open() {
      const storage = await openPostgresStorage({
        connectionString: url,
        session: `bench-${randomUUID()}`,
      });
      const session = await Session.open(storage);
      const conversations = await createWriterConversations(session, writers);
      let n = 0;
      return {
        run: (deadline) =>
          concurrentLoops(writers, deadline, (w) =>
            session.commit((tx) => sessionStep(tx, conversations[w] as ConversationId, ++n)),
          ),
        stats: () => session.commitStats,
        close: () => session.close(),
      };
    },
  };
}

/**
 * `sessions` sessions opened through one host (default maxConnections 8),
 * `writers` writers spread evenly over them, each its own conversation.
 */
function hostCase(url: string, sessions: number, writers: number, parameterized = false): Case {
  const perSession = writers / sessions;
  return {
    id: `host/${sessions}x${perSession}${parameterized ? "/parameterized" : ""}`,
    label: `Session.commit through one PostgresHost, ${sessions} session${sessions === 1 ? "" : "s"} x ${perSession} writer${perSession === 1 ? "" : "s"}${parameterized ? ", parameterized" : ""}`,
    writers,
    open: () => openHostLoad(url, sessions, perSession, parameterized),
  };
}

/** `processes` app-server processes, each with one host of `sessions` x `perSession` writers. */
function processesCase(url: string, processes: number, sessions: number, perSession: number): Case {
  return {
    id: `hosts/${processes}x${sessions}x${perSession}`,
    label: `Session.commit through ${processes} PostgresHost processes, each ${sessions} sessions x ${perSession} writers`,
    writers: processes * sessions * perSession,
    open: () => startHostProcesses(url, processes, sessions, perSession),
  };
}

/**
 * The same two rows per commit (the entry, the document's delta revision)
 * written with `pg` directly: `BEGIN`, two parameterised INSERTs, `COMMIT`,
 * on a pool with a connection per writer (up to 32), as an application
 * without Durably would. No seq or id bookkeeping, no checks, no lease.
 */
function rawCase(url: string, writers: number): Case {
  return {
    id: `raw/${writers}`,
    label: `raw pg: BEGIN, 2 INSERTs, COMMIT per commit, ${writers} writer${writers === 1 ? "" : "s"}`,
    writers,
    async open() {
      const pool = new pg.Pool({ connectionString: url, max: Math.min(writers, 32) });
      const schema = `bench_raw_${randomUUID().replace(/-/g, "").slice(0, 12)}`;
      await pool.query(`CREATE SCHEMA ${schema};
        CREATE TABLE ${schema}.entries (id bigint PRIMARY KEY, conversation_id bigint NOT NULL, commit_seq bigint NOT NULL, record text NOT NULL);
        CREATE TABLE ${schema}.revisions (document_id bigint NOT NULL, seq bigint NOT NULL, kind text NOT NULL, content text NOT NULL, version bigint NOT NULL, PRIMARY KEY (document_id, seq));`);
      let n = 0;
      return {
        run: (deadline) =>
          concurrentLoops(writers, deadline, async (w) => {
            const step = ++n;
            const client = await pool.connect();
            try {
              await client.query("BEGIN");
              await client.query(
                `INSERT INTO ${schema}.entries (id, conversation_id, commit_seq, record) VALUES ($1, $2, $3, $4)`,
                [
                  step * 2,
                  w + 1,
                  step,
                  JSON.stringify({
                    id: step * 2,
                    conversationId: w + 1,
                    kind: ENTRY_KIND,
                    data: stepData(step),
                  }),
                ],
              );
              await client.query(
                `INSERT INTO ${schema}.revisions (document_id, seq, kind, content, version) VALUES ($1, $2, 'delta', $3, 1)`,
                [w + 1, step, JSON.stringify(stepOps(step))],
              );
              await client.query("COMMIT");
            } finally {
              client.release();
            }
          }),
        close: async () => {
          await pool.query(`DROP SCHEMA ${schema} CASCADE`);
          await pool.end();
        },
      };
    },
  };
}

interface Row {
  id: string;
  label: string;
  writers: number;
  perSecond: number;
  rounds: number[];
  stats?: unknown;
}

async function measure(cases: Case[]): Promise<Row[]> {
  const opened = [];
  for (const c of cases) {
    const runner = await c.open();
    await runner.run(performance.now() + ROUND_MS / 5); // warm-up: JIT, connections, first pages
    opened.push({ c, runner, rounds: [] as number[] });
  }
  // Interleaved rounds, so drift in the machine's load hits every case alike.
  for (let round = 0; round < ROUNDS; round++)
    for (const o of opened) {
      const start = performance.now();
      const commits = await o.runner.run(start + ROUND_MS);
      o.rounds.push(commits / ((performance.now() - start) / 1000));
    }
  const rows: Row[] = [];
  for (const o of opened) {
    rows.push({
      id: o.c.id,
      label: o.c.label,
      writers: o.c.writers,
      perSecond: median(o.rounds),
      rounds: o.rounds,
      stats: o.runner.stats?.(),
    });
    await o.runner.close();
  }
  return rows;
}

let url = process.env.DURABLY_PG_URL;
let cluster: { url: string; dir: string } | undefined;
if (!url) {
  if (findServerBin() === undefined) {
    console.log(
      "PostgreSQL benchmark skipped: set DURABLY_PG_URL or install postgresql (apt-get install postgresql).",
    );
    process.exit(0);
  }
  cluster = await startCluster();
  url = cluster.url;
}
/** The 1, 5 and 15 minute load averages: figures on a shared machine mean little without them. */
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");
const loadAtStart = load();
try {
  const rows = await measure([
    rawCase(url, 1),
    durablyCase(url, 1),
    rawCase(url, WRITERS),
    durablyCase(url, WRITERS),
    hostCase(url, 1, HOST_WRITERS),
    hostCase(url, HOST_SESSIONS, HOST_WRITERS),
    // Rounds as one statement with bound parameters (commit_calls) against the literal script.
    hostCase(url, 1, 1),
    hostCase(url, 1, 1, true),
    hostCase(url, 1, HOST_WRITERS, true),
    hostCase(url, HOST_SESSIONS, HOST_WRITERS, true),
    processesCase(url, HOST_PROCESSES, HOST_SESSIONS, HOST_WRITERS / HOST_SESSIONS),
  ]);
  const by = (id: string) => rows.find((r) => r.id === id) as Row;
  const raw1 = by("raw/1");
  const rawMany = by(`raw/${WRITERS}`);
  const one = by("durably/1");
  const many = by(`durably/${WRITERS}`);
  const hostOne = by(`host/1x${HOST_WRITERS}`);
  const hostMany = by(`host/${HOST_SESSIONS}x${HOST_WRITERS / HOST_SESSIONS}`);
  const hostManyParameterized = by(
    `host/${HOST_SESSIONS}x${HOST_WRITERS / HOST_SESSIONS}/parameterized`,
  );
  const processes = by(`hosts/${HOST_PROCESSES}x${HOST_SESSIONS}x${HOST_WRITERS / HOST_SESSIONS}`);
  const hostOneParameterized = by(`host/1x${HOST_WRITERS}/parameterized`);
  const hostSingle = by("host/1x1");
  const hostSingleParameterized = by("host/1x1/parameterized");
  const table = textTable(
    ["case", "commits/s", "vs raw, same writers"],
    rows.map((r) => [
      r.label,
      int(r.perSecond),
      r.id.startsWith("raw/")
        ? "baseline"
        : r.id.startsWith("host")
          ? "-"
          : times(r.perSecond / (r.writers === 1 ? raw1 : rawMany).perSecond),
    ]),
  );
  const goals = [
    {
      goal: "PostgresStorage 1 writer vs raw pg 1 writer",
      value: one.perSecond / raw1.perSecond,
      target: 0.5,
    },
    {
      goal: `PostgresStorage ${WRITERS} writers vs 1 writer (group commit)`,
      value: many.perSecond / one.perSecond,
      target: 5,
    },
    {
      goal: `PostgresHost ${HOST_SESSIONS} sessions x ${HOST_WRITERS / HOST_SESSIONS} writers vs 1 session x ${HOST_WRITERS} writers (cross-session group commit)`,
      value: hostMany.perSecond / hostOne.perSecond,
      target: 0.8,
    },
  ];
  const header = `PostgreSQL commits/s over loopback (entry + document delta per commit), ${ROUNDS} x ${ROUND_MS} ms rounds, median${smoke ? " (SMOKE: figures meaningless)" : ""}; node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? "?"}`;
  console.log(`${header}\n  load average at start ${loadAtStart}, at end ${load()}\n${table}`);
  for (const g of goals)
    console.log(
      `  goal: ${g.goal} >= ${g.target}x: ${times(g.value)} ${g.value >= g.target ? "met" : "NOT met"}`,
    );
  console.log(
    `  Session commit stats: 1 writer ${JSON.stringify(one.stats)}, ${WRITERS} writers ${JSON.stringify(many.stats)}`,
  );
  console.log(
    `  parameterized rounds vs literal scripts: 1 writer ${times(hostSingleParameterized.perSecond / hostSingle.perSecond)}, ${hostOne.id} ${times(hostOneParameterized.perSecond / hostOne.perSecond)}, ${hostMany.id} ${times(hostManyParameterized.perSecond / hostMany.perSecond)}`,
  );
  console.log(
    `  with parameterized rounds, ${HOST_SESSIONS} sessions x ${HOST_WRITERS / HOST_SESSIONS} writers vs 1 session x ${HOST_WRITERS} writers: ${times(hostManyParameterized.perSecond / hostOneParameterized.perSecond)}`,
  );
  console.log(
    `  ${HOST_PROCESSES} host processes x ${HOST_SESSIONS} sessions x ${HOST_WRITERS / HOST_SESSIONS} writers: ${int(processes.perSecond)} commits/s in all, ${times(processes.perSecond / hostMany.perSecond)} of one such host`,
  );
  console.log(
    `  host stats: ${hostOne.id} ${JSON.stringify(hostOne.stats)}, ${hostMany.id} ${JSON.stringify(hostMany.stats)}`,
  );
  writeReport(outDir, "postgres.json", {
    smoke,
    roundMs: ROUND_MS,
    rounds: ROUNDS,
    writers: WRITERS,
    rows,
    goals,
    loadAverage: { start: loadAtStart, end: load() },
  });
} finally {
  if (cluster) stopCluster(cluster.dir);
}
