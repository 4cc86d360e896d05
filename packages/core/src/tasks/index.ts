export {
  defineTask,
  type AnyTaskDefinition,
  type TaskAbortHandler,
  type TaskCheckpoint,
  type TaskDefinition,
  type TaskDefinitionOptions,
  type TaskNext,
  type TaskPhase,
  type TaskResult,
  type TaskView,
} from "./define-task.js";
export { errorInfo } from "./error-info.js";
export type { MemoEntry, MemoGuard, MemoOptions } from "./memo.js";
export { TaskRuntime } from "./runtime.js";
export {
  Scheduler,
  type SchedulerInspection,
  type SchedulerOptions,
  type SchedulerStopReport,
  type TaskInspection,
} from "./scheduler.js";
