import type { CrashTestApi } from "@durably/contract-tests";
import { expect } from "vitest";

/** A test the suite registered: its full name (`describe > ... > it`) and body. */
export interface RecordedTest {
  name: string;
  body: () => Promise<void>;
}

/**
 * A runner that only records what a suite registers, so a test can run one
 * registered case itself and look at how it fails (the suites' checks
 * against deliberately broken backends).
 */
export function recordingApi(): { api: CrashTestApi; tests: RecordedTest[] } {
  const tests: RecordedTest[] = [];
  const path: string[] = [];
  const api: CrashTestApi = {
    describe(name, body) {
      path.push(name);
      try {
        body();
      } finally {
        path.pop();
      }
    },
    it(name, body) {
      tests.push({ name: [...path, name].join(" > "), body });
    },
    expect,
  };
  return { api, tests };
}

/** Runs a recorded test; returns what it threw, or undefined when it passed. */
export async function failureOf(test: RecordedTest | undefined): Promise<unknown> {
  if (test === undefined) throw new Error("the suite registered no such test");
  try {
    await test.body();
  } catch (error) {
    return error;
  }
  return undefined;
}
