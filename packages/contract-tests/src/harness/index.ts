export {
  registerHarnessConformance,
  type HarnessConformanceOptions,
  type HarnessTestApi,
} from "./register.js";
export type { HarnessCrashOptions } from "./crash-scenarios.js";
export { harnessScenarios, type HarnessScenario } from "./scenarios.js";
