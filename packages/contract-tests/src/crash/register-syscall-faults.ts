import { calibrate } from "./fault-calibration.js";
import type { Calibration } from "./fault-calibration.js";
import { FAULT_FAMILIES, FAULT_SYSCALLS } from "./fault-families.js";
import type { FaultFamily } from "./fault-families.js";
import { runFaultCase, TRIES } from "./fault-case.js";
import { describePlan } from "./fault-sample.js";
import type { FaultOutcome } from "./fault-sample.js";
import { crashSeed, Prng } from "./prng.js";
import { straceSupport } from "./strace-support.js";
import type { StraceSupport } from "./strace-support.js";
import type { CrashConformanceOptions, CrashTestApi, SyscallFaultOptions } from "./types.js";

/** Faults per syscall group when neither `samples` nor `CRASH_FAULT_ITERATIONS` says otherwise. */
export const DEFAULT_FAULT_SAMPLES = 1;

/** What Vitest hands a test body: `skip(note)` marks the case skipped while it runs. */
type CaseContext = { skip?: (note?: string) => void } | undefined;

export function faultSamples(fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const text = env.CRASH_FAULT_ITERATIONS;
  if (text === undefined || text === "") return fallback;
  const count = Number(text);
  if (!Number.isSafeInteger(count) || count < 1)
    throw new RangeError(
      `CRASH_FAULT_ITERATIONS must be a positive integer, got ${JSON.stringify(text)}`,
    );
  return count;
}

function validate(faults: SyscallFaultOptions): void {
  if (typeof faults.files !== "function")
    throw new TypeError(
      "syscallFaults.files must be a function (path) => the backend's files and directories",
    );
  if (faults.ignore !== undefined && typeof faults.ignore !== "function")
    throw new TypeError("syscallFaults.ignore must be a function (file) => boolean");
  for (const replay of faults.replay ?? []) {
    const text = JSON.stringify(replay);
    if (!FAULT_SYSCALLS.includes(replay.syscall))
      throw new RangeError(
        `syscallFaults.replay ${text}: syscall must be one of ${FAULT_SYSCALLS.join(", ")}`,
      );
    if (!/^E[A-Z0-9]+$/.test(replay.errno))
      throw new RangeError(`syscallFaults.replay ${text}: errno must be a name like EIO`);
    if (!(Number.isSafeInteger(replay.when) && replay.when >= 1 && replay.when <= 65535))
      throw new RangeError(`syscallFaults.replay ${text}: when must be an integer in [1, 65535]`);
  }
  if (faults.samples !== undefined && !(Number.isSafeInteger(faults.samples) && faults.samples > 0))
    throw new RangeError(`syscallFaults.samples must be a positive integer, got ${faults.samples}`);
}

function caseTitle(family: FaultFamily): string {
  const errors = `${family.errnos.join(" or ")} from ${family.syscalls.join("/")}`;
  const after =
    "after a reopen every acknowledged commit is present, none is half present, seqs and ids only grow";
  return family.mustReport
    ? `${errors}: the commit, open or close in flight rejects (never acknowledged); ${after}`
    : `${errors}: the backend may ignore it, but ${after}`;
}

/** Skipped where strace cannot run: `it.skip` when the runner has it (Vitest, Jest), else a case that says so. */
function registerSkipped(api: CrashTestApi, title: string, reason: string): void {
  const skip = (
    api.it as { skip?: (this: void, name: string, body: () => Promise<void>) => unknown }
  ).skip;
  const name = `${title} (skipped: ${reason})`;
  if (typeof skip === "function") skip(name, () => Promise.resolve());
  else api.it(name, () => Promise.resolve(console.warn(`syscall faults skipped: ${reason}`)));
}

function formatOutcome(outcome: FaultOutcome): string {
  const writer =
    outcome.errors.length === 0
      ? `the writer got no error (allowed: ${outcome.quietly ?? "?"})`
      : `the writer got: ${outcome.errors.join(" | ")}`;
  const landed = outcome.asAimed ? "where aimed" : "elsewhere than aimed";
  return `  ${describePlan(outcome.plan)}\n    failed (${landed}): ${outcome.injected.join("; ")}\n    ${writer}; ${outcome.acknowledged} commits acknowledged, all found after reopen (${(outcome.elapsedMs / 1000).toFixed(1)} s)`;
}

function formatCalibration(name: string, calibration: Calibration): string {
  const counts = Object.entries(calibration.counts.second)
    .map(([syscall, count]) => `${syscall} ${count}`)
    .join(", ");
  const unstable =
    calibration.unstable.length === 0
      ? ""
      : `; files with changing names (not aimed at): ${calibration.unstable.join(", ")}`;
  const drift =
    JSON.stringify(calibration.counts.first) === JSON.stringify(calibration.counts.second)
      ? ""
      : `; the two runs differ (${JSON.stringify(calibration.counts.first)}), so some faults may land elsewhere than aimed`;
  return `syscall faults ${name}: calls on the backend's files in a fault-free run: ${counts} (files ${calibration.files.join(", ")})${unstable}${drift}`;
}

/** The syscall-fault cases, inside the caller's describe block. */
export function registerSyscallFaultCases(
  api: CrashTestApi,
  name: string,
  options: CrashConformanceOptions & { syscallFaults: SyscallFaultOptions },
  seed: number,
): void {
  validate(options.syscallFaults);
  const faults = options.syscallFaults;
  const samples = faultSamples(faults.samples ?? DEFAULT_FAULT_SAMPLES);
  const root = new Prng(seed);
  const support: StraceSupport = straceSupport();
  let calibration: Promise<Calibration> | undefined;
  const calibrated = (usable: Extract<StraceSupport, { usable: true }>): Promise<Calibration> => {
    calibration ??= calibrate(options, faults, usable).then((result) => {
      console.info(formatCalibration(name, result));
      return result;
    });
    return calibration;
  };

  api.describe("syscall faults (strace -e inject)", () => {
    if (!support.usable) console.warn(`${name}: syscall-fault cases skipped: ${support.reason}`);
    for (const family of FAULT_FAMILIES) {
      const title = caseTitle(family);
      if (!support.usable) {
        registerSkipped(api, title, support.reason);
        continue;
      }
      api.it(
        title,
        // Rest parameters: Jest reads a declared first parameter as a `done` callback.
        async (...args: unknown[]) => {
          const context = args[0] as CaseContext;
          const result = await runFaultCase({
            family,
            options,
            support,
            calibration: await calibrated(support),
            prng: root.fork(`syscall-faults/${name}/${family.name}`),
            samples,
            replays: (faults.replay ?? []).filter((replay) =>
              family.syscalls.includes(replay.syscall),
            ),
            seed,
          });
          if (result.kind === "nothing-to-inject") {
            const note = `${name} makes no ${family.syscalls.join("/")} call on its files in a fault-free run: nothing to inject`;
            console.info(`syscall faults: ${note}`);
            context?.skip?.(note);
            return;
          }
          const { outcomes, missed, failure } = result;
          const failed = failure === undefined ? "" : ", some failed (below)";
          console.info(
            `syscall faults ${name}, ${family.name} (seed ${seed}): ${outcomes.length} fault(s) passed${failed}${missed > 0 ? `, ${missed} run(s) where the aimed call did not happen` : ""}\n${outcomes.map(formatOutcome).join("\n")}`,
          );
          if (failure !== undefined) throw failure;
        },
        120_000 + (samples * TRIES + (faults.replay?.length ?? 0)) * 45_000,
      );
    }
  });
}

/**
 * Registers only the syscall-fault scenarios (`registerCrashConformance`
 * registers them too when `syscallFaults` is given): a child commits under
 * `strace -f -e inject=<syscall>:error=<errno>:when=<n>` restricted to the
 * backend's files; the writer must get the error, and a reopen must hold
 * every acknowledged commit whole.
 */
export function registerSyscallFaultConformance(
  api: CrashTestApi,
  name: string,
  options: CrashConformanceOptions,
): void {
  if (typeof options.open !== "function")
    throw new TypeError("registerSyscallFaultConformance: options.open must be a function");
  if (typeof options.childModule !== "string" && !(options.childModule instanceof URL))
    throw new TypeError(
      "registerSyscallFaultConformance: options.childModule must be a path or URL",
    );
  const faults = options.syscallFaults;
  if (faults === undefined)
    throw new TypeError(
      "registerSyscallFaultConformance: options.syscallFaults is required (which files are the backend's)",
    );
  validate(faults);
  if (
    options.seed !== undefined &&
    !(Number.isSafeInteger(options.seed) && options.seed >= 0 && options.seed <= 0xffffffff)
  )
    throw new RangeError(
      `registerSyscallFaultConformance: options.seed must be an integer in [0, 4294967295], got ${options.seed}`,
    );
  api.describe(`${name} > crash`, () => {
    registerSyscallFaultCases(
      api,
      name,
      { ...options, syscallFaults: faults },
      crashSeed(options.seed),
    );
  });
}
