export {
  registerCrashConformance,
  DEFAULT_CRASH_ITERATIONS,
  CONCURRENT_COMMITTERS,
} from "./register.js";
export type { CrashConformanceOptions, CorruptionKind, CrashTestApi } from "./types.js";
export { CrashCheckFailed } from "./failure.js";
export type { CrashRule } from "./failure.js";
