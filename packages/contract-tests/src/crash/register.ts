import { runCorruption } from "./corruption.js";
import { formatSummary, runKillLoop } from "./kill-loop.js";
import { crashIterations, crashSeed, Prng } from "./prng.js";
import { registerSyscallFaultCases } from "./register-syscall-faults.js";
import { runSingleOwner } from "./single-owner.js";
import type { CorruptionKind, CrashConformanceOptions, CrashTestApi } from "./types.js";

/** Kill-and-reopen cycles per kill scenario when neither `iterations` nor `CRASH_ITERATIONS` says otherwise. */
export const DEFAULT_CRASH_ITERATIONS = 8;
/** Committers in the group-commit variant. */
export const CONCURRENT_COMMITTERS = 16;

const CORRUPTIONS: readonly CorruptionKind[] = ["flip-byte", "truncate-middle-line"];

/** Time budget of one kill-loop test: a child start, a kill and a verification per iteration. */
function loopTimeoutMs(iterations: number): number {
  return 60_000 + iterations * 15_000;
}

/**
 * Registers the kill -9 scenarios for a persistent backend:
 * a real child process commits through a Session and is SIGKILLed at
 * seeded random moments; after each kill the storage is reopened and checked
 * (acknowledged commits present, none half present, a prefix survives, seqs
 * and ids only grow, the storage keeps working). Plus the cross-process
 * single-owner rule, with `corrupt` corruption detection, and with
 * `syscallFaults` real syscall faults injected by strace.
 */
export function registerCrashConformance(
  api: CrashTestApi,
  name: string,
  options: CrashConformanceOptions,
): void {
  if (typeof options.open !== "function")
    throw new TypeError("registerCrashConformance: options.open must be a function");
  if (typeof options.childModule !== "string" && !(options.childModule instanceof URL))
    throw new TypeError("registerCrashConformance: options.childModule must be a path or URL");
  if (
    options.iterations !== undefined &&
    !(Number.isSafeInteger(options.iterations) && options.iterations > 0)
  )
    throw new RangeError(
      `registerCrashConformance: options.iterations must be a positive integer, got ${options.iterations}`,
    );
  const iterations = crashIterations(options.iterations ?? DEFAULT_CRASH_ITERATIONS);
  if (
    options.seed !== undefined &&
    !(Number.isSafeInteger(options.seed) && options.seed >= 0 && options.seed <= 0xffffffff)
  )
    throw new RangeError(
      `registerCrashConformance: options.seed must be an integer in [0, 4294967295], got ${options.seed}`,
    );
  const seed = crashSeed(options.seed);
  const root = new Prng(seed);

  api.describe(`${name} > crash`, () => {
    api.describe("kill -9 while committing", () => {
      for (const committers of [1, CONCURRENT_COMMITTERS]) {
        const who =
          committers === 1 ? "one committer" : `${committers} concurrent committers (group commit)`;
        api.it(
          `${who}, ${iterations} SIGKILLs: every acknowledged commit survives, none is half present, a prefix survives, seqs and ids only grow, the storage keeps working`,
          async () => {
            const summary = await runKillLoop({
              name,
              options,
              committers,
              iterations,
              seed,
              prng: root.fork(`kill-loop/${committers}`),
              progress:
                iterations >= 100 ? (line) => console.info(`${name}, ${who}: ${line}`) : undefined,
            });
            console.info(formatSummary(name, summary));
          },
          loopTimeoutMs(iterations),
        );
      }
    });

    api.describe("single owner", () => {
      api.it(
        "a second open fails with StorageLocked while another live process owns the storage and changes nothing; after SIGKILL of the owner one open succeeds at once",
        () => runSingleOwner(options),
        120_000,
      );
    });

    const corrupt = options.corrupt;
    if (corrupt !== undefined) {
      api.describe("corruption", () => {
        for (const kind of CORRUPTIONS)
          api.it(
            `${kind}: open or the first read fails with StorageCorrupted naming where; no commit is silently dropped or changed`,
            () => runCorruption({ ...options, corrupt }, kind),
            60_000,
          );
      });
    }

    const syscallFaults = options.syscallFaults;
    if (syscallFaults !== undefined)
      registerSyscallFaultCases(api, name, { ...options, syscallFaults }, seed);
  });
}
