import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Calibration } from "../src/crash/fault-calibration.js";
import { FAULT_FAMILIES, familyOf } from "../src/crash/fault-families.js";
import { pickPlan, replayPlan } from "../src/crash/fault-sample.js";
import { Prng } from "../src/crash/prng.js";
import { CrashCheckFailed } from "../src/crash/failure.js";
import {
  faultSamples,
  registerSyscallFaultConformance,
} from "../src/crash/register-syscall-faults.js";
import { registerCrashConformance } from "../src/crash/register.js";
import { straceArgs } from "../src/crash/strace-command.js";
import { parseStraceLog, placeCalls } from "../src/crash/strace-log.js";
import { straceSupport } from "../src/crash/strace-support.js";

const ROOT = "/tmp/durably-fault-abc123";
const MARKS = `${ROOT}/fault-marks`;

// Lines in the shape `strace -f -y -s 16 -o <file>` writes them (tid first).
const LOG = [
  `100 openat(AT_FDCWD</work>, "${ROOT}/storage/main.jsonl", O_RDONLY|O_CLOEXEC) = 21<${ROOT}/storage/main.jsonl>`,
  `100 write(4<${MARKS}>, "O\\n", 2) = 2`,
  `101 openat(AT_FDCWD</work>, "${ROOT}/storage/doc-5.jsonl", O_WRONLY|O_CREAT|O_APPEND|O_CLOEXEC, 0644) = 22<${ROOT}/storage/doc-5.jsonl>`,
  `100 write(4<${MARKS}>, "o\\n", 2) = 2`,
  `100 write(4<${MARKS}>, "B1\\n", 3) = 3`,
  `101 write(22<${ROOT}/storage/doc-5.jsonl>, "/not/a/path\\n", 12 <unfinished ...>`,
  `100 write(1<pipe:[77]>, "hello", 5) = 5`,
  `101 <... write resumed>) = -1 EIO (Input/output error) (INJECTED)`,
  `100 write(4<${MARKS}>, "E1\\n", 3) = 3`,
  `101 rename("${ROOT}/storage/doc-5.jsonl.tmp", "${ROOT}/storage/doc-5.jsonl") = 0`,
  `100 write(4<${MARKS}>, "C\\n", 2) = 2`,
  `101 fsync(23<${ROOT}/storage/old.jsonl (deleted)>) = 0`,
  `100 +++ exited with 0 +++`,
  `100 write(4<${MARKS}>, "c\\n", 2) = 2`,
].join("\n");

describe("syscall faults > reading strace's log", () => {
  it("reads each call once, joins a call split by another thread's output, and sees the injection", () => {
    const calls = parseStraceLog(LOG);
    expect(calls.map((call) => `${call.tid} ${call.syscall}`)).toEqual([
      "100 openat",
      "100 write",
      "101 openat",
      "100 write",
      "100 write",
      "101 write",
      "100 write",
      "100 write",
      "101 rename",
      "100 write",
      "101 fsync",
      "100 write",
    ]);
    const split = calls[5];
    expect(split?.injected).toBe(true);
    expect(split?.result).toBe("-1 EIO (Input/output error) (INJECTED)");
    expect(calls.filter((call) => call.injected)).toHaveLength(1);
  });

  it("takes paths from decoded descriptors and path arguments, never from a written buffer", () => {
    const calls = parseStraceLog(LOG);
    expect(calls[5]?.paths).toEqual([`${ROOT}/storage/doc-5.jsonl`]);
    expect(calls[5]?.firstString).toBe("/not/a/path\n");
    expect(calls[8]?.paths).toEqual([
      `${ROOT}/storage/doc-5.jsonl.tmp`,
      `${ROOT}/storage/doc-5.jsonl`,
    ]);
    expect(calls[10]?.paths).toEqual([`${ROOT}/storage/old.jsonl`]);
    expect(calls[6]?.paths).toEqual([]);
  });

  it("places every call in the phase the child's markers opened, and leaves the markers out", () => {
    const { markers, calls } = placeCalls(parseStraceLog(LOG), MARKS);
    expect(markers).toEqual(["O", "o", "B1", "E1", "C", "c"]);
    expect(calls.map((call) => [call.syscall, call.phase])).toEqual([
      ["openat", { kind: "starting" }],
      ["openat", { kind: "open" }],
      ["write", { kind: "commit", attempt: 1 }],
      ["write", { kind: "commit", attempt: 1 }],
      ["rename", { kind: "between", after: 1 }],
      ["fsync", { kind: "close" }],
    ]);
  });
});

describe("syscall faults > planning", () => {
  const calibration: Calibration = {
    files: ["storage", "storage/main.jsonl"],
    unstable: [],
    calls: [
      {
        syscall: "openat",
        when: 1,
        thread: 1,
        phase: { kind: "open" },
        file: "storage/main.jsonl",
      },
      ...Array.from({ length: 20 }, (_, i) => ({
        syscall: i % 2 === 0 ? "write" : "pwrite64",
        when: Math.floor(i / 2) + 1,
        thread: 1,
        phase: { kind: "commit" as const, attempt: 1 + Math.floor(i / 4) },
        file: "storage/main.jsonl",
      })),
    ],
    counts: { first: {}, second: {} },
    runMs: 0,
  };
  const write = familyOf("pwrite64");

  it("puts every syscall in exactly one group, each group with errors to inject", () => {
    const all = FAULT_FAMILIES.flatMap((family) => family.syscalls);
    expect(new Set(all).size).toBe(all.length);
    for (const family of FAULT_FAMILIES) expect(family.errnos.length).toBeGreaterThan(0);
    expect(familyOf("fdatasync")?.name).toBe("sync");
    expect(familyOf("renameat2")?.name).toBe("rename");
    expect(familyOf("unlink")?.mustReport).toBe(false);
  });

  it("a seed replays the same faults; another seed picks others; only calls of the group are aimed at", () => {
    if (write === undefined) throw new Error("no write group");
    const plans = (seed: number) => {
      const prng = new Prng(seed);
      return Array.from({ length: 10 }, () => pickPlan(write, calibration, prng));
    };
    expect(plans(5)).toEqual(plans(5));
    expect(plans(5)).not.toEqual(plans(6));
    for (const plan of plans(5)) {
      expect(["write", "pwrite64"]).toContain(plan?.target.syscall);
      expect(write.errnos).toContain(plan?.errno);
    }
    const rename = familyOf("rename");
    if (rename === undefined) throw new Error("no rename group");
    expect(pickPlan(rename, calibration, new Prng(1))).toBeUndefined();
  });

  it("a replayed fault aims at the calibrated call it names, or fails saying it names none", () => {
    if (write === undefined) throw new Error("no write group");
    const plan = replayPlan(write, calibration, { syscall: "pwrite64", errno: "EIO", when: 3 });
    expect(plan.target).toEqual({
      syscall: "pwrite64",
      when: 3,
      thread: 1,
      phase: { kind: "commit", attempt: 2 },
      file: "storage/main.jsonl",
    });
    expect(() =>
      replayPlan(write, calibration, { syscall: "write", errno: "EIO", when: 99 }),
    ).toThrow(CrashCheckFailed);
  });

  it("registerCrashConformance adds one syscall-fault case per group when given syscallFaults, none without", () => {
    const names = (withFaults: boolean) => {
      const path: string[] = [];
      const found: string[] = [];
      const api = {
        describe(name: string, body: () => void) {
          path.push(name);
          body();
          path.pop();
        },
        it(name: string) {
          found.push([...path, name].join(" > "));
        },
      };
      (api.it as unknown as { skip: (name: string) => void }).skip = (name) =>
        found.push([...path, name].join(" > "));
      registerCrashConformance(api, "X", {
        childModule: "/x.js",
        open: () => Promise.reject(new Error("unused")),
        ...(withFaults ? { syscallFaults: { files: (p: string) => [p] } } : {}),
      });
      return found.filter((name) =>
        name.startsWith("X > crash > syscall faults (strace -e inject) > "),
      );
    };
    expect(names(true)).toHaveLength(FAULT_FAMILIES.length);
    expect(names(false)).toEqual([]);
  });

  it("registration refuses a replay that strace could not run", () => {
    const api = { describe: () => undefined, it: () => undefined };
    const register = (replay: { syscall: string; errno: string; when: number }) =>
      registerSyscallFaultConformance(api, "x", {
        childModule: "/x.js",
        open: () => Promise.reject(new Error("unused")),
        syscallFaults: { files: (path) => [path], replay: [replay] },
      });
    expect(() => register({ syscall: "read", errno: "EIO", when: 1 })).toThrow(
      /syscall must be one of/,
    );
    expect(() => register({ syscall: "write", errno: "oops", when: 1 })).toThrow(/errno/);
    expect(() => register({ syscall: "write", errno: "EIO", when: 0 })).toThrow(/when/);
  });

  it("builds strace's options: threads followed, paths decoded, only the given paths, one injection", () => {
    const args = straceArgs(
      { usable: true, path: "/usr/bin/strace", seccompBpf: true },
      {
        log: "/tmp/x.log",
        syscalls: ["pwrite64", "write"],
        paths: ["/a", "/b"],
        inject: { syscall: "pwrite64", errno: "ENOSPC", when: 12 },
      },
    );
    expect(args).toEqual([
      "-f",
      "--seccomp-bpf",
      "-qq",
      "-y",
      "-s",
      "16",
      "-e",
      "signal=none",
      "-o",
      "/tmp/x.log",
      "-e",
      "trace=?pwrite64,?write",
      "-e",
      "inject=pwrite64:error=ENOSPC:when=12",
      "-P",
      "/a",
      "-P",
      "/b",
    ]);
    expect(() =>
      straceArgs(
        { usable: true, path: "strace", seccompBpf: false },
        { log: "/l", syscalls: ["write"], inject: { syscall: "write", errno: "EIO", when: 0 } },
      ),
    ).toThrow(/when=0/);
  });

  it("CRASH_FAULT_ITERATIONS overrides the number of faults and rejects garbage", () => {
    expect(faultSamples(1, {})).toBe(1);
    expect(faultSamples(1, { CRASH_FAULT_ITERATIONS: "25" })).toBe(25);
    expect(() => faultSamples(1, { CRASH_FAULT_ITERATIONS: "0" })).toThrow(
      /CRASH_FAULT_ITERATIONS/,
    );
  });
});

// What the suite relies on, checked against the strace installed here.
const support = straceSupport();
describe.skipIf(!support.usable)("syscall faults > strace -P on this machine", () => {
  /** Runs `script` (CommonJS, `dir` in scope) under strace; returns what it printed and the parsed log. */
  function traced(paths: (dir: string) => string[], inject: string, script: string) {
    if (!support.usable) throw new Error(support.reason);
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "durably-strace-check-")));
    try {
      const log = join(dir, "strace.log");
      const args = straceArgs(support, {
        log,
        syscalls: ["write", "fsync", "openat"],
        paths: paths(dir),
        inject: { syscall: inject, errno: "EIO", when: 1 },
      });
      const result = spawnSync(
        support.path,
        [...args, "--", process.execPath, "-e", `const dir = ${JSON.stringify(dir)};\n${script}`],
        { encoding: "utf8" },
      );
      return { dir, out: result.stdout.trim(), calls: parseStraceLog(readFileSync(log, "utf8")) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const writeBoth = `
    const fs = require("node:fs");
    const a = fs.openSync(dir + "/a", "w"), b = fs.openSync(dir + "/b", "w");
    for (const [name, fd] of [["b", b], ["a", a]])
      try { fs.writeSync(fd, "x"); console.log(name, "ok") } catch (e) { console.log(name, e.code) }
    try { fs.fsyncSync(fs.openSync(dir, "r")); console.log("dir ok") } catch (e) { console.log("dir", e.code) }`;

  it("matches a write on a descriptor by the path it resolves to, and leaves other files alone", () => {
    const { dir, out, calls } = traced((d) => [join(d, "a")], "write", writeBoth);
    expect(out.split("\n")).toEqual(["b ok", "a EIO", "dir ok"]);
    expect(calls.filter((call) => call.injected).map((call) => call.paths)).toEqual([[`${dir}/a`]]);
  });

  it("matches a directory's own descriptor (an fsync of it), but not the files inside it", () => {
    const inside = traced((d) => [d], "write", writeBoth);
    expect(inside.out.split("\n")).toEqual(["b ok", "a ok", "dir ok"]);
    const dir = traced((d) => [d], "fsync", writeBoth);
    expect(dir.out.split("\n")).toEqual(["b ok", "a ok", "dir EIO"]);
  });
});
