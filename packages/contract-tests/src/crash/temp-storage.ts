import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A fresh temporary directory for one scenario; the backend gets
 * `<dir>/storage` (a path that does not exist yet: a file for SQLite, a
 * directory for JSONL or LevelDB, as the backend decides).
 */
export async function withTempStorage<T>(run: (path: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "durably-crash-"));
  try {
    return await run(join(dir, "storage"));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => (ms <= 0 ? setImmediate(resolve) : setTimeout(resolve, ms)));
}

/** The error's `name` and `code` match: compared by name so two copies of core (source and dist) still agree. */
export function isDurablyError(
  error: unknown,
  name: string,
  code: string,
): error is Error & { code: string } {
  return (
    error instanceof Error && error.name === name && (error as { code?: unknown }).code === code
  );
}
