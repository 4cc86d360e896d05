/**
 * What `npm test` does before the suites: probe the system tools, install
 * the missing ones from Debian packages where it can, and otherwise say
 * which suites are skipped and how to enable them. Driven through a fake
 * machine (no package is installed or removed here), plus one run of the
 * real script with a fake apt-get on PATH.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { prepareSystem, setupOptions } from "../../../scripts/system-setup.mjs";
import { STATUS_ENV, systemTool } from "../../../scripts/system-tools.mjs";
import { formatSummary } from "../../../scripts/test-summary.mjs";
import { ROOT } from "../src/repo.ts";
import { describeRun, run } from "../src/run.ts";
import { FakeMachine } from "./support/fake-machine.ts";

const EVERYTHING = ["chromium", "postgresql", "strace", "build-essential", "python3"];
const quiet = () => undefined;

function byName(statuses: ReturnType<typeof prepareSystem>) {
  return Object.fromEntries(statuses.map((s) => [s.name, s]));
}

describe("npm test's system setup", () => {
  it("installs nothing when every tool is there", () => {
    const machine = new FakeMachine({ installed: EVERYTHING });
    const statuses = prepareSystem({ system: machine, log: quiet });
    expect(statuses.every((s) => s.available)).toBe(true);
    expect(machine.calls.filter((c) => c.startsWith("apt-get"))).toEqual([]);
    expect(formatSummary(statuses)).toBe(
      "npm test: no suite was skipped for a missing tool (system tools: build-tools, chromium, postgresql, strace).",
    );
  });

  it("as root with apt-get, installs every missing tool in one apt-get install", () => {
    const machine = new FakeMachine({ installed: ["build-essential", "python3"] });
    const tools = byName(prepareSystem({ system: machine, log: quiet }));
    expect(machine.calls.filter((c) => c.startsWith("apt-get"))).toEqual([
      "apt-get update -qq",
      "apt-get install -y -qq --no-install-recommends chromium postgresql strace",
    ]);
    expect(tools.chromium).toMatchObject({
      available: true,
      path: "/usr/bin/chromium",
      installed: ["chromium"],
    });
    expect(tools.postgresql).toMatchObject({ available: true, path: "/usr/lib/postgresql/15/bin" });
    expect(tools.strace).toMatchObject({ available: true, path: "/usr/bin/strace" });
  });

  it("when apt cannot find one package, still installs the others and names apt's error", () => {
    const machine = new FakeMachine({
      installed: ["build-essential", "python3"],
      unknownPackages: ["chromium"],
    });
    const tools = byName(prepareSystem({ system: machine, log: quiet }));
    expect(tools.postgresql?.available).toBe(true);
    expect(tools.strace?.available).toBe(true);
    expect(tools.chromium).toMatchObject({
      available: false,
      reason:
        "no Chromium at /usr/bin/chromium; cannot install: apt-get install chromium failed (exit 100): E: Unable to locate package chromium",
      enable:
        "apt-get install -y --no-install-recommends chromium, or set CHROMIUM_PATH=/path/to/chromium",
    });
  });

  it("not root: installs nothing and names the sudo command for each missing tool", () => {
    const machine = new FakeMachine({
      uid: 1000,
      installed: ["build-essential", "python3", "strace"],
    });
    const statuses = prepareSystem({ system: machine, log: quiet });
    const tools = byName(statuses);
    expect(machine.calls.filter((c) => c.startsWith("apt-get"))).toEqual([]);
    expect(tools.chromium?.reason).toBe(
      "no Chromium at /usr/bin/chromium; cannot install: not root (uid 1000)",
    );
    expect(tools.postgresql?.enable).toBe(
      "sudo apt-get install -y --no-install-recommends postgresql, or set DURABLY_PG_URL=postgres://user:password@host:port/database",
    );
    const summary = formatSummary(statuses);
    expect(summary).toContain("npm test: 6 suites skipped, 2 system tools missing");
    expect(summary).toContain(
      "    skipped: @durably/storage-store: IndexedDB in headless Chromium (test/indexeddb.test.ts)",
    );
    expect(summary).toContain("    skipped: @durably/storage-postgres: every test");
    expect(summary).toContain(
      "    enable:  sudo apt-get install -y --no-install-recommends chromium, or set CHROMIUM_PATH=/path/to/chromium",
    );
    expect(summary).toContain("a real failure still fails");
  });

  it("without apt-get, or with installing turned off, says so", () => {
    const noApt = byName(
      prepareSystem({
        system: new FakeMachine({ apt: false, installed: EVERYTHING.slice(1) }),
        log: quiet,
      }),
    );
    expect(noApt.chromium?.reason).toBe(
      "no Chromium at /usr/bin/chromium; cannot install: no apt-get on PATH",
    );
    const off = new FakeMachine({ installed: EVERYTHING.slice(1) });
    const tools = byName(prepareSystem({ system: off, install: false, log: quiet }));
    expect(tools.chromium?.reason).toContain("cannot install: installation turned off");
    expect(off.calls.filter((c) => c.startsWith("apt-get"))).toEqual([]);
    expect(setupOptions([], { DURABLY_TEST_NO_INSTALL: "1" }).install).toBe(false);
    expect(setupOptions(["--no-install"], {}).install).toBe(false);
  });

  it("strace that cannot trace (no ptrace) is unavailable, not reinstalled, with a hint to allow ptrace", () => {
    const machine = new FakeMachine({ installed: EVERYTHING, ptrace: false });
    const tools = byName(prepareSystem({ system: machine, log: quiet }));
    expect(machine.calls.filter((c) => c.startsWith("apt-get"))).toEqual([]);
    expect(tools.strace).toMatchObject({
      available: false,
      reason:
        "strace cannot trace here: strace: ptrace(PTRACE_TRACEME, ...): Operation not permitted",
      enable: "allow ptrace for this user or container (Docker: --cap-add=SYS_PTRACE)",
    });
  });

  it("a server named by DURABLY_PG_URL needs no local PostgreSQL", () => {
    const machine = new FakeMachine({
      uid: 1000,
      installed: ["build-essential", "python3", "chromium", "strace"],
      env: { DURABLY_PG_URL: "postgres://ci@db:5432/ci" },
    });
    expect(byName(prepareSystem({ system: machine, log: quiet })).postgresql).toMatchObject({
      available: true,
      detail: "server from DURABLY_PG_URL",
    });
  });

  it("refuses an unknown tool name in --pretend-missing", () => {
    expect(() => setupOptions(["--pretend-missing=chrome"], {})).toThrow(
      'pretend-missing: unknown tool "chrome"; known: build-tools, chromium, postgresql, strace',
    );
  });
});

describe("systemTool, what a test asks", () => {
  it("answers from what npm test passed down, with the reason and the enabling command", () => {
    const saved = process.env[STATUS_ENV];
    process.env[STATUS_ENV] = JSON.stringify({
      strace: {
        name: "strace",
        available: false,
        reason: "strace not on PATH",
        enable: "apt-get install -y strace",
      },
    });
    try {
      expect(systemTool("strace")).toEqual({
        name: "strace",
        available: false,
        reason: "strace not on PATH",
        enable: "apt-get install -y strace",
      });
    } finally {
      if (saved === undefined) delete process.env[STATUS_ENV];
      else process.env[STATUS_ENV] = saved;
    }
  });

  it("names the known tools when asked for an unknown one", () => {
    expect(() => systemTool("firefox" as never)).toThrow(
      'systemTool("firefox"): unknown tool; known: build-tools, chromium, postgresql, strace',
    );
  });
});

describe("scripts/system-setup.mjs on this machine, with a fake apt-get on PATH", () => {
  it("tries apt-get for the tools it is told to treat as missing and prints one summary block", async () => {
    const bin = mkdtempSync(path.join(tmpdir(), "durably-fake-apt-"));
    try {
      const calls = path.join(bin, "calls");
      writeFileSync(
        path.join(bin, "apt-get"),
        `#!/bin/sh\necho "$*" >> ${calls}\ncase "$1" in install) echo "E: Unable to locate package $5" >&2; exit 100;; esac\n`,
      );
      chmodSync(path.join(bin, "apt-get"), 0o755);
      const result = await run(
        process.execPath,
        [path.join(ROOT, "scripts", "system-setup.mjs"), "--pretend-missing=chromium"],
        {
          cwd: ROOT,
          env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, DURABLY_PG_URL: "" },
        },
      );
      expect(result.code, describeRun("system-setup.mjs", result)).toBe(0);
      const root = process.getuid?.() === 0;
      const why = root
        ? "cannot install: apt-get install chromium failed (exit 100): E: Unable to locate package chromium"
        : `cannot install: not root (uid ${process.getuid?.()})`;
      expect(result.stdout).toContain(`  chromium: treated as missing (--pretend-missing); ${why}`);
      expect(result.stdout).toContain(
        "    skipped: @durably/storage-store: IndexedDB in headless Chromium",
      );
      expect(result.stdout.match(/^={78}$/gm)).toHaveLength(2);
      if (root)
        expect(readFileSync(calls, "utf8").split("\n").filter(Boolean)).toEqual([
          "update -qq",
          "install -y -qq --no-install-recommends chromium",
          "install -y -qq --no-install-recommends chromium",
        ]);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
