import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import "fake-indexeddb/auto";
import { BrowserLevel } from "browser-level";
import { ClassicLevel } from "classic-level";
import { MemoryLevel } from "memory-level";
import { MemoryStore, levelStore, type KeyValueStore } from "../src/index.js";

/** A store kind the tests run on: `make()` gives a fresh store; `reopen()` (persistent ones) the same data again. */
export interface Backend {
  name: string;
  persistent: boolean;
  fresh(): { store: KeyValueStore; reopen?: () => KeyValueStore; cleanup: () => void };
}

export function tempDir(prefix = "durably-store-"): string {
  return mkdtempSync(join(process.env.TMPDIR ?? tmpdir(), prefix));
}

export const backends: Backend[] = [
  {
    name: "MemoryStore",
    persistent: false,
    fresh: () => ({ store: new MemoryStore(), cleanup: () => undefined }),
  },
  {
    name: "memory-level",
    persistent: false,
    fresh: () => ({ store: levelStore(new MemoryLevel()), cleanup: () => undefined }),
  },
  {
    name: "classic-level",
    persistent: true,
    fresh: () => {
      const dir = tempDir();
      const location = join(dir, "db");
      return {
        store: levelStore(new ClassicLevel(location)),
        reopen: () => levelStore(new ClassicLevel(location)),
        cleanup: () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    // IndexedDB through browser-level, on fake-indexeddb (real Chromium runs in indexeddb.test.ts).
    name: "browser-level (fake-indexeddb)",
    persistent: true,
    fresh: () => {
      const name = `durably-${++databases}-${Math.random().toString(36).slice(2)}`;
      return {
        store: levelStore(new BrowserLevel(name)),
        reopen: () => levelStore(new BrowserLevel(name)),
        cleanup: () => undefined,
      };
    },
  },
];
let databases = 0;

/**
 * Runs `body` with a fresh store of `backend` (and, for a persistent one,
 * `reopen`: the same data through a new handle); removes the store after.
 */
export async function withFreshStore<T>(
  backend: Backend,
  body: (fresh: { store: KeyValueStore; reopen?: () => KeyValueStore }) => Promise<T>,
): Promise<T> {
  const { cleanup, ...fresh } = backend.fresh();
  try {
    return await body(fresh);
  } finally {
    cleanup();
  }
}
