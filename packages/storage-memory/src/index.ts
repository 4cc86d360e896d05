export { MemoryStorage } from "./memory-storage.js";
