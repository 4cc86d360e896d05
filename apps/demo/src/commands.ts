import { randomUUID } from "node:crypto";
import { readdir } from "node:fs/promises";
import { openJsonlStorage } from "@durably/storage-jsonl";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { levelStore, StoreStorage } from "@durably/storage-store";
import type { Storage } from "@durably/core";
import { BACKENDS, classicLevel } from "./backends.js";
import type { BackendName } from "./backend-names.js";
import { Checks } from "./checks.js";
import { CliError } from "./cli.js";
import { detectBackend, type Detected } from "./detect.js";
import { reportExperiment } from "./experiment-report.js";
import { printContents, readContents } from "./inspect.js";
import { PG_SCHEMA, PG_URL_VAR, pgSession, pgUrl } from "./postgres-config.js";
import { heading } from "./render/heading.js";
import type { Output } from "./render/output.js";
import { withProgress } from "./render/progress.js";
import { experimentOn } from "./run-backends.js";
import { showStored } from "./tour/stored-step.js";

/**
 * `demo experiment --backend <name> --dir <path>`: the experiment on one backend, kept on disk.
 * PostgreSQL keeps it in the `DURABLY_PG_URL` database instead, under a session of its own.
 */
export async function experimentCommand(
  out: Output,
  backendName: BackendName,
  dir: string | undefined,
): Promise<number> {
  const backend = BACKENDS[backendName];
  if (backendName === "postgres" && pgUrl() === undefined) {
    throw new CliError(
      `experiment --backend postgres needs ${PG_URL_VAR} set to a reachable PostgreSQL server (${PG_URL_VAR}=postgres://user:password@host:5432/database)`,
    );
  }
  if (dir !== undefined) await requireEmpty(dir);
  // The experiment starts from an empty session, so each run gets a new one.
  const where =
    backendName === "postgres" ? `experiment-${Date.now()}-${randomUUID().slice(0, 8)}` : dir;
  heading(out, `The experiment on ${backend.title}${dir === undefined ? "" : ` in ${dir}`}`);
  const run = await withProgress(out, `experiment on ${backend.title}`, () =>
    experimentOn(backend, where ?? ""),
  );
  const checks = new Checks(out);
  reportExperiment(out, checks, [run], { compare: false });
  await showStored(out, checks, run);
  if (backendName === "postgres") {
    out.line();
    out.line(
      `The rows stay in schema ${PG_SCHEMA} under session_key ${JSON.stringify(pgSession(run.dir))} (demo inspect reads files only).`,
    );
  } else if (dir !== undefined) {
    out.line();
    out.line(`Inspect it any time: demo inspect ${backend.location(dir)}`);
  }
  return checks.failed.length === 0 ? 0 : 1;
}

/** The experiment starts from empty storage, so its ids, seqs and stored rows are exactly the tour's. */
async function requireEmpty(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return;
    throw new CliError(`--dir ${dir}: cannot be read (${String(error)})`, { cause: error });
  }
  if (names.length > 0) {
    throw new CliError(
      `--dir ${dir} is not empty; the experiment needs a new or empty directory (inspect existing storage with: demo inspect ${dir})`,
    );
  }
}

function openDetected(found: Detected): Promise<Storage> {
  switch (found.backend) {
    case "sqlite":
      return openSqliteStorage(found.file);
    case "jsonl":
      return openJsonlStorage(found.dir);
    case "store":
      return StoreStorage.open(levelStore(classicLevel(found.dir)));
  }
}

/** `demo inspect <path>`: whatever a Durably storage holds, read through the Storage port only. */
export async function inspectCommand(out: Output, path: string): Promise<number> {
  const found = await detectBackend(path);
  const storage = await openDetected(found);
  try {
    const contents = await withProgress(out, "reading", () => readContents(storage));
    const where = found.backend === "sqlite" ? found.file : found.dir;
    printContents(out, `${BACKENDS[found.backend].title} storage at ${where}`, contents);
  } finally {
    await storage.close();
  }
  return 0;
}
