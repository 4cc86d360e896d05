export {
  registerCrashConformance,
  DEFAULT_CRASH_ITERATIONS,
  CONCURRENT_COMMITTERS,
} from "./register.js";
export {
  registerSyscallFaultConformance,
  DEFAULT_FAULT_SAMPLES,
} from "./register-syscall-faults.js";
export type {
  CrashConformanceOptions,
  CorruptionKind,
  CrashTestApi,
  SyscallFaultOptions,
  FaultReplay,
} from "./types.js";
export { CrashCheckFailed } from "./failure.js";
export type { CrashRule } from "./failure.js";
export { Prng } from "./prng.js";
export {
  runWithFault,
  straceFaultArgs,
  straceSupport,
  type PathFault,
  type StraceSupport,
} from "./strace-support.js";
