export { openJsonlStorage, JsonlStorage, type JsonlStorageOptions } from "./jsonl-storage.js";
export type { FileSystem, AppendFile, FileLock } from "./file-system.js";
export { nodeFileSystem } from "./node-file-system.js";
export type { RecoveryReport } from "./recovery.js";
export { MARKER_FORMAT, RECORD_FORMAT, MAIN_FILE, LOCK_FILE } from "./line-format.js";
