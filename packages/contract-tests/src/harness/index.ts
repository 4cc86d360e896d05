export {
  registerHarnessConformance,
  type HarnessConformanceOptions,
  type HarnessTestApi,
} from "./register.js";
export type { HarnessCrashOptions } from "./crash-scenarios.js";
export { harnessScenarios, type HarnessScenario } from "./scenarios.js";
export {
  scriptHeaders,
  startOpenAiTestServer,
  type OpenAiTestServer,
  type OpenAiTestServerOptions,
  type ReceivedRequest,
} from "./model-server/openai-server.js";
export { scriptedModels, type HarnessModelFactory, type ModelScript } from "./scripts.js";
