import { expect } from "vitest";
import type { StorageRule, TestApi } from "../../src/index.js";

/** How one registered test ended. */
export interface Outcome {
  /** The rule group: the `describe` name after its `<name> > ` prefix. */
  rule: string;
  name: string;
  status: "passed" | "skipped" | "failed";
  /** The skip note, for a skipped test. */
  note?: string;
  /** The error, for a failed test. */
  error?: unknown;
}

class Skipped extends Error {}

/**
 * Registers a suite with a runner that records `describe`/`it`, then runs
 * every test itself, one at a time, with a test context whose `skip(note)`
 * ends the test as skipped (as Vitest's does). Returns every outcome, so a
 * test can check which rule groups a storage passes or fails.
 */
export async function runRegistered(register: (api: TestApi) => void): Promise<Outcome[]> {
  const tests: { rule: string; name: string; body: (...context: unknown[]) => Promise<void> }[] =
    [];
  let group = "";
  register({
    describe(name, body) {
      group = name.slice(name.indexOf(" > ") + 3);
      body();
    },
    it(name, body) {
      tests.push({ rule: group, name, body });
    },
    expect,
  });
  const outcomes: Outcome[] = [];
  for (const test of tests) {
    let note: string | undefined;
    const context = {
      skip(text: string): never {
        note = text;
        throw new Skipped(text);
      },
    };
    try {
      await test.body(context);
      outcomes.push({ rule: test.rule, name: test.name, status: "passed" });
    } catch (error) {
      outcomes.push(
        error instanceof Skipped
          ? { rule: test.rule, name: test.name, status: "skipped", note }
          : { rule: test.rule, name: test.name, status: "failed", error },
      );
    }
  }
  return outcomes;
}

/** The rule groups with at least one failed test. */
export function failedRules(outcomes: readonly Outcome[]): Set<string> {
  return new Set(outcomes.filter((o) => o.status === "failed").map((o) => o.rule));
}

/** `rule > name` of every failed test, for readable expectations. */
export function failedNames(outcomes: readonly Outcome[]): string[] {
  return outcomes.filter((o) => o.status === "failed").map((o) => `${o.rule} > ${o.name}`);
}

/** The names of the failed tests of one rule group. */
export function failedIn(outcomes: readonly Outcome[], rule: StorageRule): string[] {
  return outcomes.filter((o) => o.status === "failed" && o.rule === rule).map((o) => o.name);
}
