import { CheckedStorage } from "@durably/core/storage";
import { MemoryBackend } from "./memory-backend.js";

/**
 * The reference Storage: every rule of the contract, nothing persisted.
 * Batches are copied in and results copied out, so a caller that keeps or
 * mutates a reference shows up here first.
 *
 * To simulate a slow or failing backend in tests, subclass it and override
 * `commit` (or any read), calling `super` for the real behaviour.
 */
export class MemoryStorage extends CheckedStorage {
  constructor() {
    super(new MemoryBackend());
  }
}
