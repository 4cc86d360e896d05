/** The storage contract version this suite checks (see RULES.md). A new rule is a major bump or sits behind a capability. */
export const CONTRACT_VERSION = 1;

export { registerStorageConformance, storageScenarios } from "./storage/register.js";
export type {
  ExpectLike,
  Matchers,
  Reopen,
  StorageConformanceOptions,
  StorageFactory,
  StorageRule,
  TestApi,
} from "./storage/api.js";
export { exerciseAccessPaths } from "./storage/access-paths.js";
export { reopeningStorage, type ReopeningStorage } from "./storage/reopening-storage.js";
export {
  persistentStorageFactory,
  type PersistentFactoryOptions,
  type StorageLocation,
} from "./storage/persistent-factory.js";
export * from "./crash/index.js";
export {
  registerSessionConformance,
  sessionScenarios,
  type SessionConformanceOptions,
} from "./session/register.js";
export type { SessionRule } from "./session/api.js";
export {
  registerTaskConformance,
  taskScenarios,
  type TaskConformanceOptions,
} from "./tasks/register.js";
export type { TaskRule } from "./tasks/api.js";
export * from "./harness/index.js";
