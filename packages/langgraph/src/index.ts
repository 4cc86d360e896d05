export { DurablyCheckpointSaver, type DurablyCheckpointSaverOptions } from "./saver.js";
export { CheckpointConfigError, CheckpointDataCorrupted, CheckpointValueError } from "./errors.js";
