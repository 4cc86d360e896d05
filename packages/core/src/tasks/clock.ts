import type { Session } from "../session/session.js";

function shown(value: unknown): string {
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  if (typeof value === "number") return String(value); // NaN, Infinity
  if (typeof value === "bigint") return `the bigint ${value}n`;
  if (value === null || value === undefined) return String(value);
  return `a value of type ${typeof value}`;
}

/**
 * Reads the session clock for a timestamp the scheduler stores (`what`
 * names it, e.g. "task 7 endedAt"). A clock that returns anything but a
 * finite number fails the read with a `TypeError` naming the value, before
 * anything of that commit is written, so no task ever stores a timestamp
 * that is not a number.
 */
export function readClock(session: Session, what: string): number {
  const value: unknown = session.clock();
  if (typeof value !== "number" || !Number.isFinite(value))
    throw new TypeError(
      `the session clock returned ${shown(value)} for ${what}; it must return milliseconds since the epoch as a finite number (nothing was stored)`,
    );
  return value;
}
