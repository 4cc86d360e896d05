import { expect } from "vitest";

/** A string matching `pattern`, typed as a string so it fits inside an expected record. */
export function matching(pattern: RegExp): string {
  const matcher: unknown = expect.stringMatching(pattern);
  return matcher as string;
}
