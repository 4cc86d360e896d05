#!/usr/bin/env node
// `npm test`: everything a fresh clone needs, then every suite.
//   1. system tools (Chromium, a PostgreSQL server, strace, build tools):
//      probed, and installed from Debian packages when missing and possible;
//   2. dependencies, with the pinned pnpm (`pnpm install --frozen-lockfile`);
//   3. a throwaway PostgreSQL cluster on loopback, unless DURABLY_PG_URL names a server;
//   4. `pnpm run check`: prettier, then turbo's build, lint, typecheck, test;
//   5. one summary block naming every suite skipped for a missing tool.
// The exit code is the check run's. With --require-all (or
// DURABLY_TEST_REQUIRE_ALL=1) a skipped suite fails the run too; without it a
// skip is named in the summary but does not fail the run (a machine that
// cannot install a tool still proves everything else).
//
//   npm test -- --no-install              never install system packages
//   npm test -- --pretend-missing=strace  run as if strace were not installed
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { describeStatuses, prepareSystem, setupOptions } from "./system-setup.mjs";
import { STATUS_ENV } from "./system-tools.mjs";
import { finalExit, formatSummary } from "./test-summary.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const started = Date.now();
const argv = process.argv.slice(2);
const options = setupOptions(argv);
const requireAll = argv.includes("--require-all") || process.env.DURABLY_TEST_REQUIRE_ALL === "1";
const pnpm = [path.join(root, "scripts", "pnpm.mjs")];
const seconds = () => `${Math.round((Date.now() - started) / 1000)}s`;

const statuses = prepareSystem(options);
console.log(describeStatuses(statuses));

function finish(checkCode) {
  mkdirSync(path.join(root, ".tools"), { recursive: true });
  writeFileSync(
    path.join(root, ".tools", "system-tools.json"),
    `${JSON.stringify({ at: new Date().toISOString(), statuses }, null, 2)}\n`,
  );
  console.log(`\n${formatSummary(statuses)}`);
  const { code, why } = finalExit(checkCode, statuses, requireAll);
  if (why !== undefined) console.log(why);
  console.log(`--- npm test finished in ${seconds()} (exit ${code})`);
  process.exit(code);
}

const install = spawnSync(process.execPath, [...pnpm, "install", "--frozen-lockfile"], {
  cwd: root,
  stdio: "inherit",
});
const buildTools = statuses.findIndex((s) => s.name === "build-tools");
// Dependencies are installed, so compilers no longer matter to this run.
if (install.status === 0 && !statuses[buildTools].available) statuses.splice(buildTools, 1);
if (install.status !== 0) {
  console.log(`pnpm install failed (exit ${install.status ?? install.signal})`);
  finish(install.status || 1);
}

const env = { ...process.env };
const statusOf = (name) => statuses.find((s) => s.name === name);
let cluster;
const postgres = statusOf("postgresql");
if (postgres.available && (env.DURABLY_PG_URL ?? "").trim() === "") {
  const { startCluster } =
    await import("../packages/storage-postgres/scripts/throwaway-cluster.mjs");
  try {
    cluster = await startCluster();
    env.DURABLY_PG_URL = cluster.url;
    console.log(`--- postgresql: throwaway cluster on ${cluster.url} (${seconds()})`);
  } catch (error) {
    Object.assign(postgres, {
      available: false,
      reason: `the throwaway cluster did not start: ${error.message.split("\n")[0]}`,
    });
  }
}
const chromium = statusOf("chromium");
if (chromium.available) env.CHROMIUM_PATH = chromium.path;
env[STATUS_ENV] = JSON.stringify(
  Object.fromEntries(statuses.map(({ name, neededBy: _, ...status }) => [name, status])),
);

async function stopCluster() {
  if (cluster === undefined) return;
  const dir = cluster.dir;
  cluster = undefined;
  const { stopCluster } =
    await import("../packages/storage-postgres/scripts/throwaway-cluster.mjs");
  try {
    stopCluster(dir);
  } catch (error) {
    console.error(`could not stop the PostgreSQL cluster in ${dir}: ${error.message}`);
  }
}

const check = spawn(process.execPath, [...pnpm, "run", "check"], {
  cwd: root,
  env,
  stdio: "inherit",
});
for (const signal of ["SIGINT", "SIGTERM"])
  process.on(signal, () => {
    check.kill(signal);
  });
const code = await new Promise((resolve) =>
  check.on("exit", (status, signal) => resolve(status ?? (signal ? 1 : 0))),
);
await stopCluster();
finish(code);
