#!/usr/bin/env node
// Checks the system tools the test suites need and installs the missing ones
// from Debian packages when it can (root, apt-get, installation not turned
// off). Returns one status per tool; the unavailable ones carry why and the
// command that enables them.
//
//   node scripts/system-setup.mjs                   probe, install what is missing, print the result
//   node scripts/system-setup.mjs --no-install      probe only
//   node scripts/system-setup.mjs --pretend-missing=chromium,strace
//                                                   treat those as not installed (to see the
//                                                   install and "cannot install" paths on a
//                                                   machine that has them)
import process from "node:process";
import { pathToFileURL } from "node:url";
import { enableCommand, probeTools, realSystem, TOOLS } from "./system-tools.mjs";
import { formatSummary } from "./test-summary.mjs";

const APT_ENV = { DEBIAN_FRONTEND: "noninteractive" };

function lastLine(text) {
  const lines = text.trim().split("\n").filter(Boolean);
  return lines[lines.length - 1] ?? "";
}

function failure(what, result) {
  const said = lastLine(result.stderr) || lastLine(result.stdout);
  return `${what} failed (exit ${result.status})${said ? `: ${said}` : ""}`;
}

/** Why this machine cannot install Debian packages, or undefined when it can. */
function installBlocker(system, install) {
  if (!install) return "installation turned off (--no-install or DURABLY_TEST_NO_INSTALL=1)";
  if (system.uid !== 0) return `not root (uid ${system.uid ?? "unknown"})`;
  if (system.which("apt-get") === undefined) return "no apt-get on PATH";
  return undefined;
}

/** Runs apt-get for `tools`; returns a failure message per tool name that could not be installed. */
function aptInstall(system, tools, log) {
  const failed = new Map();
  const packages = tools.flatMap((t) => t.packages);
  log(`--- installing Debian packages: ${packages.join(" ")}`);
  const update = system.run("apt-get", ["update", "-qq"], { env: APT_ENV });
  if (update.status !== 0) {
    for (const tool of tools) failed.set(tool.name, failure("apt-get update", update));
    return failed;
  }
  const args = ["install", "-y", "-qq", "--no-install-recommends"];
  const all = system.run("apt-get", [...args, ...packages], { env: APT_ENV, inherit: true });
  if (all.status === 0) return failed;
  // One package apt cannot find must not keep the others out: retry one by one.
  for (const tool of tools) {
    const one = system.run("apt-get", [...args, ...tool.packages], { env: APT_ENV });
    if (one.status !== 0)
      failed.set(tool.name, failure(`apt-get install ${tool.packages.join(" ")}`, one));
  }
  return failed;
}

/**
 * Probes every tool and installs the missing ones when it can. `pretendMissing`
 * names tools to report as absent whatever the machine has.
 */
export function prepareSystem({
  system = realSystem(),
  install = true,
  pretendMissing = [],
  log = (line) => console.log(line),
} = {}) {
  const probe = (names) =>
    probeTools(system, names).map((status) =>
      pretendMissing.includes(status.name)
        ? { name: status.name, available: false, reason: "treated as missing (--pretend-missing)" }
        : status,
    );
  const statuses = probe(TOOLS.map((t) => t.name));
  const missing = TOOLS.filter((tool) => {
    const status = statuses.find((s) => s.name === tool.name);
    return !status.available && status.installable !== false;
  });
  if (missing.length > 0) {
    const blocker = installBlocker(system, install);
    const failed = blocker ? undefined : aptInstall(system, missing, log);
    const again = blocker ? [] : probe(missing.map((t) => t.name));
    for (const tool of missing) {
      const index = statuses.findIndex((s) => s.name === tool.name);
      const after = again.find((s) => s.name === tool.name);
      if (after?.available) {
        statuses[index] = { ...after, installed: tool.packages };
        continue;
      }
      const why =
        blocker ??
        failed.get(tool.name) ??
        `apt-get installed ${tool.packages.join(" ")}, yet: ${after.reason}`;
      statuses[index] = {
        ...statuses[index],
        reason: `${statuses[index].reason}; cannot install: ${why}`,
      };
    }
  }
  return statuses.map((status) => {
    if (status.available) return status;
    const tool = TOOLS.find((t) => t.name === status.name);
    return { ...status, enable: enableCommand(tool, status, system), neededBy: tool.neededBy };
  });
}

/** One line per tool, printed before the tests start. */
export function describeStatuses(statuses) {
  return statuses
    .map((s) => {
      if (!s.available) return `--- ${s.name}: unavailable (${s.reason})`;
      const where = s.path ?? s.detail ?? "ok";
      return `--- ${s.name}: ${where}${s.installed ? ` (installed ${s.installed.join(" ")})` : ""}`;
    })
    .join("\n");
}

/** Reads `--no-install` and `--pretend-missing=a,b` (also used by scripts/test.mjs). */
export function setupOptions(argv, env = process.env) {
  const pretend = argv.find((a) => a.startsWith("--pretend-missing="));
  const known = TOOLS.map((t) => t.name);
  const pretendMissing = pretend ? pretend.slice("--pretend-missing=".length).split(",") : [];
  for (const name of pretendMissing)
    if (!known.includes(name))
      throw new TypeError(
        `--pretend-missing: unknown tool ${JSON.stringify(name)}; known: ${known.join(", ")}`,
      );
  return {
    install: !argv.includes("--no-install") && env.DURABLY_TEST_NO_INSTALL !== "1",
    pretendMissing,
  };
}

const invoked =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invoked) {
  const statuses = prepareSystem(setupOptions(process.argv.slice(2)));
  console.log(describeStatuses(statuses));
  console.log(formatSummary(statuses));
}
