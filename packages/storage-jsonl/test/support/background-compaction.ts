import type { Storage } from "@durably/core";
import type { JsonlStorage } from "../../src/index.js";

/**
 * The real storage, starting a compaction in the background after every
 * commit (not awaited: later commits and reads overlap it). Close waits for
 * them and rethrows the first that failed, so a suite run through it fails
 * on a compaction fault too.
 */
export function compactingAfterEveryCommit(
  storage: JsonlStorage,
): Storage & { compactions: number } {
  const running: Promise<unknown>[] = [];
  const failures: unknown[] = [];
  let compactions = 0;
  return new Proxy(storage, {
    get(target, property) {
      if (property === "compactions") return compactions;
      if (property === "commit")
        return async (...args: Parameters<Storage["commit"]>) => {
          const result = await target.commit(...args);
          if (result.stored > 0)
            running.push(
              target.compact().then(
                () => compactions++,
                (error: unknown) => failures.push(error),
              ),
            );
          return result;
        };
      if (property === "close")
        return async () => {
          await Promise.all(running);
          await target.close();
          if (failures.length > 0) throw failures[0];
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function"
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  }) as unknown as Storage & { compactions: number };
}

/** The real storage, compacted right before each close (the first close only: close is idempotent). */
export function compactingOnClose(storage: JsonlStorage): Storage {
  let closing: Promise<void> | undefined;
  return new Proxy(storage, {
    get(target, property) {
      if (property === "close")
        return () =>
          (closing ??= (async () => {
            try {
              await target.compact();
            } finally {
              await target.close();
            }
          })());
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function"
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}
