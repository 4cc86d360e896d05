// Core cannot depend on @durably/storage-memory (it depends on core: a package
// cycle turbo refuses), so the tests reach the workspace sibling's source directly.
export { MemoryStorage } from "../../../storage-memory/src/index.js";
export { MemoryBackend } from "../../../storage-memory/src/memory-backend.js";
