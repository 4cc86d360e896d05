// The system tools some test suites need beyond node_modules, how to find
// each one, the Debian package that provides it, and which suites skip
// without it. `npm test` (scripts/test.mjs) installs what is missing and
// passes what it found to the tests in DURABLY_SYSTEM_TOOLS; a test asks
// with `systemTool(name)`, which reads that, or probes the machine itself
// when the test runs on its own (vitest in a package directory).
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, readdirSync } from "node:fs";
import path from "node:path";
import process from "node:process";

/** The environment variable carrying the probed statuses to the tests. */
export const STATUS_ENV = "DURABLY_SYSTEM_TOOLS";

/**
 * Each tool: the Debian packages that provide it, how to probe it, and the
 * suites that are skipped without it (named in the summary `npm test`
 * prints). A suite that starts needing a tool adds itself to `neededBy`.
 */
export const TOOLS = [
  {
    name: "build-tools",
    packages: ["build-essential", "python3"],
    neededBy: ["pnpm install: better-sqlite3 is compiled from source (make, g++, python3)"],
    otherwise: "or install make, a C++ compiler and python3 your own way",
    probe: probeBuildTools,
  },
  {
    name: "chromium",
    packages: ["chromium"],
    neededBy: [
      "@durably/storage-store: IndexedDB in headless Chromium (test/indexeddb.test.ts)",
      "@durably/demo: the live viewer in headless Chromium (test/serve-chromium.test.ts)",
    ],
    otherwise: "or set CHROMIUM_PATH=/path/to/chromium",
    probe: probeChromium,
  },
  {
    name: "postgresql",
    packages: ["postgresql"],
    neededBy: [
      "@durably/storage-postgres: every test",
      "@durably/demo: the tour, experiment and live viewer on PostgreSQL",
      "@durably/langgraph: LangGraph's validation suite and SIGKILL test on PostgreSQL",
      "@durably/bench: postgres.bench smoke run",
    ],
    otherwise: "or set DURABLY_PG_URL=postgres://user:password@host:port/database",
    probe: probePostgres,
  },
  {
    name: "strace",
    packages: ["strace"],
    neededBy: [
      "syscall-fault crash suites (strace -e inject): storage-sqlite, storage-jsonl, storage-store",
      "storage-sqlite close-fault and storage-store level-errors / skipped-log / durability tests",
    ],
    probe: probeStrace,
  },
];

/** The machine, as the probes and the installer see it (tests pass a fake one). */
export function realSystem() {
  return {
    env: process.env,
    uid: typeof process.getuid === "function" ? process.getuid() : undefined,
    which(command) {
      for (const dir of (this.env.PATH ?? "").split(path.delimiter)) {
        if (dir === "") continue;
        const candidate = path.join(dir, command);
        if (isExecutable(candidate)) return candidate;
      }
      return undefined;
    },
    isExecutable,
    listDir(dir) {
      try {
        return readdirSync(dir);
      } catch {
        return [];
      }
    },
    run(command, args, options = {}) {
      const result = spawnSync(command, args, {
        encoding: "utf8",
        env: { ...this.env, ...options.env },
        stdio: options.inherit ? ["ignore", "inherit", "pipe"] : "pipe",
        timeout: options.timeoutMs,
      });
      return {
        status: result.status ?? (result.error ? 127 : 1),
        stdout: result.stdout ?? "",
        stderr: result.stderr ?? result.error?.message ?? "",
      };
    },
  };
}

function isExecutable(file) {
  try {
    accessSync(file, constants.X_OK);
    return existsSync(file);
  } catch {
    return false;
  }
}

function probeBuildTools(system) {
  const missing = ["make", "python3"].filter((c) => system.which(c) === undefined);
  if (system.which("g++") === undefined && system.which("c++") === undefined) missing.push("g++");
  return missing.length === 0
    ? { available: true }
    : { available: false, reason: `${missing.join(", ")} not on PATH` };
}

function probeChromium(system) {
  const file = system.env.CHROMIUM_PATH || "/usr/bin/chromium";
  return system.isExecutable(file)
    ? { available: true, path: file }
    : { available: false, reason: `no Chromium at ${file}` };
}

function probePostgres(system) {
  if ((system.env.DURABLY_PG_URL ?? "").trim() !== "")
    return { available: true, detail: "server from DURABLY_PG_URL" };
  const fromEnv = system.env.DURABLY_PG_BIN;
  const root = "/usr/lib/postgresql";
  const bins = fromEnv
    ? [fromEnv]
    : system
        .listDir(root)
        .sort((a, b) => Number(b) - Number(a))
        .map((version) => path.join(root, version, "bin"));
  const bin = bins.find((dir) => system.isExecutable(path.join(dir, "initdb")));
  if (bin === undefined)
    return {
      available: false,
      reason: `no PostgreSQL server (no ${fromEnv ?? root}/*/bin/initdb)`,
    };
  // As root the throwaway cluster runs as the `postgres` user the Debian package creates.
  if (system.uid === 0 && system.run("id", ["-u", "postgres"]).status !== 0)
    return { available: false, reason: "no `postgres` user to run the server as (root may not)" };
  return { available: true, path: bin };
}

function probeStrace(system) {
  const file = system.which("strace");
  if (file === undefined) return { available: false, reason: "strace not on PATH" };
  // Installed is not enough: containers often forbid ptrace.
  const traced = system.run(file, ["-f", "-o", "/dev/null", "true"], { timeoutMs: 10_000 });
  if (traced.status !== 0) {
    const why = traced.stderr.trim().split("\n")[0] || `exit ${traced.status}`;
    return {
      available: false,
      reason: `strace cannot trace here: ${why}`,
      installable: false,
      enable: "allow ptrace for this user or container (Docker: --cap-add=SYS_PTRACE)",
    };
  }
  return { available: true, path: file };
}

/** Probes every tool (or those named) without installing anything. */
export function probeTools(system = realSystem(), names = TOOLS.map((t) => t.name)) {
  return TOOLS.filter((tool) => names.includes(tool.name)).map((tool) => ({
    name: tool.name,
    ...tool.probe(system),
  }));
}

/** The command that enables a missing tool on this machine, for the summary and skip messages. */
export function enableCommand(tool, status, system = realSystem()) {
  if (status.enable) return status.enable;
  const sudo = system.uid === 0 ? "" : "sudo ";
  const apt = `${sudo}apt-get install -y --no-install-recommends ${tool.packages.join(" ")}`;
  return tool.otherwise ? `${apt}, ${tool.otherwise}` : apt;
}

/**
 * What a test needs to know about one tool: `{ available: true, path? }`, or
 * `{ available: false, reason, enable }` to skip with. Reads the statuses
 * `npm test` passed down; probes the machine when run outside `npm test`.
 */
export function systemTool(name) {
  const tool = TOOLS.find((t) => t.name === name);
  if (tool === undefined)
    throw new TypeError(
      `systemTool(${JSON.stringify(name)}): unknown tool; known: ${TOOLS.map((t) => t.name).join(", ")}`,
    );
  let status;
  const passed = process.env[STATUS_ENV];
  if (passed) status = JSON.parse(passed)[name];
  status ??= probeTools(realSystem(), [name])[0];
  return status.available ? status : { ...status, enable: enableCommand(tool, status) };
}
