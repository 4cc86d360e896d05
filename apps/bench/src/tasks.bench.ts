// Tasks created and completed per second on SQLite, 1 and 64 concurrent,
// next to raw better-sqlite3 doing the same row writes in the same run.
//
//   node --conditions=@durably/source --import tsx apps/bench/src/tasks.bench.ts [--smoke]
//
// Writes <repo>/bench-results/tasks.json (or BENCH_OUT) and prints a table.
import { cpus } from "node:os";
import Database from "better-sqlite3";
import { defineTask, ROOT_CONVERSATION_ID, Scheduler, Session, type TaskId } from "@durably/core";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { Scratch } from "./paths.js";
import { int, textTable, times } from "./table.js";
import { scriptFlags, writeReport } from "./script-flags.js";

const { smoke, outDir } = scriptFlags();
const SECONDS = smoke ? 0.2 : Number(process.env.BENCH_TASK_SECONDS ?? 3);
const CONCURRENCY = [1, 64] as const;

/** The measured task: two phases (an intent commit, then the outcome commit with an entry). */
const Job = defineTask({
  name: "bench.job",
  version: 1,
  initial: (n: number) => ({ phase: "intent", n }),
  phases: {
    intent: async (task, rt) => {
      await rt.commit(() => ({ phase: "outcome", n: task.checkpoint.n }));
    },
    outcome: async (task, rt) => {
      await rt.commit(async (tx) => {
        await tx.appendEntry(task.conversationId, { kind: "bench.done", byTaskId: task.id });
        return { status: "terminal", outcome: { kind: "completed", value: task.checkpoint.n } };
      });
    },
  },
  abort: () => undefined,
});

interface Row {
  case: string;
  concurrency: number;
  tasks: number;
  seconds: number;
  tasksPerSecond: number;
}

async function durably(concurrency: number, scratch: Scratch): Promise<Row> {
  const session = await Session.open(await openSqliteStorage(scratch.path("tasks.sqlite")));
  const scheduler = new Scheduler(session, [Job], { concurrency });
  await scheduler.start();
  let done = 0;
  const start = performance.now();
  const deadline = start + SECONDS * 1000;
  // `concurrency` producers, each creating a task and waiting for its outcome: that many in flight.
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const id: TaskId = await session.commit((tx) =>
          tx.createTask(Job, done, {
            ownership: { kind: "ownerless" },
            conversationId: ROOT_CONVERSATION_ID,
          }),
        );
        const task = await scheduler.waitForTask(id);
        if (task.state.status !== "terminal" || task.state.outcome.kind !== "completed")
          throw new Error(`task ${id} did not complete: ${JSON.stringify(task.state)}`);
        done++;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const calls = session.commitStats;
  await scheduler.stop();
  await session.close();
  return {
    case: `Durably tasks on SQLite (${JSON.stringify(calls)})`,
    concurrency,
    tasks: done,
    seconds,
    tasksPerSecond: done / seconds,
  };
}

/**
 * The same stored work without Durably: per task a task-row insert, a
 * reservation update, a checkpoint update, and a terminal update with an entry
 * insert, each its own transaction (what one commit per transition costs).
 */
function raw(scratch: Scratch): Row {
  const db = new Database(scratch.path("raw.sqlite"));
  db.pragma("locking_mode = EXCLUSIVE");
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(`
    CREATE TABLE tasks (id INTEGER PRIMARY KEY, status TEXT NOT NULL, record TEXT NOT NULL);
    CREATE INDEX tasks_by_status ON tasks (status, id);
    CREATE TABLE entries (id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, record TEXT NOT NULL);
  `);
  const begin = db.prepare("BEGIN IMMEDIATE");
  const commit = db.prepare("COMMIT");
  const insertTask = db.prepare("INSERT INTO tasks (id, status, record) VALUES (?, ?, ?)");
  const updateTask = db.prepare("UPDATE tasks SET status = ?, record = ? WHERE id = ?");
  const insertEntry = db.prepare(
    "INSERT INTO entries (id, conversation_id, record) VALUES (?, 1, ?)",
  );
  const tx = (body: () => void): void => {
    begin.run();
    body();
    commit.run();
  };
  let n = 0;
  const start = performance.now();
  const deadline = start + SECONDS * 1000;
  while (performance.now() < deadline) {
    const id = ++n * 2;
    const record = (state: object) =>
      JSON.stringify({ id, conversationId: 1, kind: "bench.job", version: 1, input: n, state });
    tx(() =>
      insertTask.run(
        id,
        "pending",
        record({ status: "pending", checkpoint: { phase: "intent", n } }),
      ),
    );
    tx(() =>
      updateTask.run(
        "running",
        record({ status: "running", checkpoint: { phase: "intent", n } }),
        id,
      ),
    );
    tx(() =>
      updateTask.run(
        "running",
        record({ status: "running", checkpoint: { phase: "outcome", n } }),
        id,
      ),
    );
    tx(() => {
      insertEntry.run(
        id + 1,
        JSON.stringify({ id: id + 1, conversationId: 1, kind: "bench.done", byTaskId: id }),
      );
      updateTask.run(
        "terminal",
        record({ status: "terminal", outcome: { kind: "completed", value: n } }),
        id,
      );
    });
  }
  const seconds = (performance.now() - start) / 1000;
  db.close();
  return {
    case: "raw better-sqlite3, 4 transactions per task",
    concurrency: 1,
    tasks: n,
    seconds,
    tasksPerSecond: n / seconds,
  };
}

const scratch = new Scratch();
try {
  const rows: Row[] = [];
  const baseline = raw(scratch);
  rows.push(baseline);
  for (const c of CONCURRENCY) rows.push(await durably(c, scratch));
  const table = textTable(
    ["case", "in flight", "tasks", "tasks/s", "vs raw"],
    rows.map((r) => [
      r.case.replace(/ \(\{.*\}\)$/, ""),
      String(r.concurrency),
      int(r.tasks),
      int(r.tasksPerSecond),
      times(r.tasksPerSecond / baseline.tasksPerSecond),
    ]),
  );
  const header = `Tasks per second (create + reserve + 2 phases + terminal), SQLite synchronous=NORMAL, ${SECONDS}s per case${smoke ? " (SMOKE: figures meaningless)" : ""}; node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? "?"}`;
  console.log(`${header}\n${table}`);
  for (const r of rows.slice(1))
    console.log(`  c=${r.concurrency}: commit stats ${r.case.match(/\((\{.*\})\)$/)?.[1] ?? ""}`);
  writeReport(outDir, "tasks.json", { smoke, seconds: SECONDS, rows });
} finally {
  scratch.dispose();
}
