#!/usr/bin/env node
// A PostgreSQL cluster for tests: initdb into a temporary directory, a
// server on a free loopback port with trust auth, stopped and deleted
// afterwards. Uses the Debian server binaries (/usr/lib/postgresql/<v>/bin);
// as root it runs them as the `postgres` user, since PostgreSQL refuses root.
//
//   node throwaway-cluster.mjs start   prints DURABLY_PG_URL=... and PGCLUSTER_DIR=...
//   node throwaway-cluster.mjs stop <dir>
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** The newest installed server's bin directory, or undefined. */
export function findServerBin() {
  const fromEnv = process.env.DURABLY_PG_BIN;
  if (fromEnv && existsSync(join(fromEnv, "initdb"))) return fromEnv;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0], "bin") : undefined;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function asServerUser(bin, args, dir) {
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const command = isRoot ? "runuser" : bin;
  const argv = isRoot ? ["-u", "postgres", "--", bin, ...args] : args;
  const result = spawnSync(command, argv, { cwd: dir, encoding: "utf8" });
  if (result.status !== 0)
    throw new Error(
      `${bin} ${args.join(" ")} failed (${result.status ?? result.signal}): ${result.stderr || result.stdout}`,
    );
  return result.stdout;
}

/** Starts a cluster; returns { url, dir, port }. */
export async function startCluster() {
  const bin = findServerBin();
  if (bin === undefined)
    throw new Error(
      "no PostgreSQL server binaries found (apt-get install postgresql, or set DURABLY_PG_BIN)",
    );
  const dir = mkdtempSync(join(tmpdir(), "durably-pg-"));
  const data = join(dir, "data");
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (isRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  asServerUser(
    join(bin, "initdb"),
    [
      "-D",
      data,
      "-U",
      "postgres",
      "--auth=trust",
      "--encoding=UTF8",
      "--no-sync",
      "--no-instructions",
    ],
    dir,
  );
  const port = await freePort();
  // Loopback only; fsync stays on (the default) so crash tests see real durability.
  const options = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${dir} -c max_connections=200`;
  asServerUser(
    join(bin, "pg_ctl"),
    ["-D", data, "-l", join(dir, "server.log"), "-o", options, "-w", "-t", "60", "start"],
    dir,
  );
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, dir, port };
}

/** Stops the cluster started in `dir` and deletes it. */
export function stopCluster(dir) {
  const bin = findServerBin();
  if (bin !== undefined && existsSync(join(dir, "data", "postmaster.pid")))
    asServerUser(
      join(bin, "pg_ctl"),
      ["-D", join(dir, "data"), "-m", "immediate", "-w", "stop"],
      dir,
    );
  rmSync(dir, { recursive: true, force: true });
}

const invoked =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
const [command, arg] = invoked ? process.argv.slice(2) : [];
if (command === "start") {
  const { url, dir } = await startCluster();
  console.log(`DURABLY_PG_URL=${url}`);
  console.log(`PGCLUSTER_DIR=${dir}`);
} else if (command === "stop") {
  if (!arg) throw new Error("usage: throwaway-cluster.mjs stop <dir>");
  stopCluster(arg);
} else if (command !== undefined) {
  throw new Error(`unknown command ${command}: use start or stop`);
}
