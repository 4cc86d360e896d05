import type { Storage } from "@durably/core";
import type {
  Reopen,
  StorageConformanceOptions,
  StorageFactory,
  StorageRule,
  TestApi,
} from "./api.js";
import { atomicBatches } from "./atomic.js";
import { closing } from "./closing.js";
import { detachment } from "./detachment.js";
import { documents } from "./documents.js";
import { entryScans } from "./entry-scans.js";
import { ids } from "./ids.js";
import { persistence } from "./persistence.js";
import { readYourCommit } from "./read-your-commit.js";
import { refusal } from "./refusal.js";
import { scans } from "./scans.js";
import { perBatchSeq } from "./seq.js";
import { submissions } from "./submissions.js";
import { Check, type RuleGroup, type Scenario } from "./support.js";

const GROUPS: readonly RuleGroup[] = [
  atomicBatches,
  perBatchSeq,
  refusal,
  readYourCommit,
  detachment,
  ids,
  scans,
  entryScans,
  submissions,
  documents,
  persistence,
  closing,
];

/** Every storage scenario name, by rule group, so adapter authors can see what the suite checks. */
export const storageScenarios: Readonly<Record<StorageRule, readonly string[]>> = Object.freeze(
  Object.fromEntries(
    GROUPS.map((group) => [group.rule, Object.freeze(group.scenarios.map((s) => s.name))]),
  ) as Record<StorageRule, readonly string[]>,
);

/** The runner's way to mark a running test skipped, if its test context has one (Vitest's `context.skip`). */
function runnerSkip(context: unknown): ((note: string) => void) | undefined {
  const skip = (context as { skip?: unknown } | undefined)?.skip;
  if (typeof skip !== "function") return undefined;
  return (note) => {
    (skip as (this: unknown, note: string) => void).call(context, note);
  };
}

async function runScenario(
  api: TestApi,
  factory: StorageFactory,
  rule: string,
  s: Scenario,
  testContext: unknown,
): Promise<void> {
  let used = false;
  let skipped: string | undefined;
  await factory(async (storage: Storage, reopen?: Reopen) => {
    used = true;
    let current = storage;
    const check = new Check(api.expect, rule);
    await s.run({
      get storage() {
        return current;
      },
      canReopen: reopen !== undefined,
      async reopen() {
        if (reopen === undefined)
          return check.fail("this scenario needs reopen(), but the factory passed none to use()");
        current = await reopen();
        return current;
      },
      check,
      skip(reason) {
        skipped = reason;
      },
    });
  });
  if (!used) throw new Error(`[${rule}] the storage factory resolved without calling use(storage)`);
  // Skip once the factory has cleaned up: Vitest's skip throws to end the test.
  if (skipped !== undefined) runnerSkip(testContext)?.(`[${rule}] ${skipped}`);
}

/**
 * Registers the storage conformance suite under the injected runner: one
 * `describe` per rule group (`${name} > refusal`), one `it` per rule.
 * Each scenario gets a fresh storage from `factory`.
 */
export function registerStorageConformance(
  api: TestApi,
  name: string,
  factory: StorageFactory,
  options: StorageConformanceOptions = {},
): void {
  const wanted = options.rules === undefined ? undefined : new Set<string>(options.rules);
  for (const group of GROUPS) {
    if (wanted !== undefined && !wanted.has(group.rule)) continue;
    api.describe(`${name} > ${group.rule}`, () => {
      for (const s of group.scenarios)
        api.it(s.name, (...context) => runScenario(api, factory, group.rule, s, context[0]));
    });
  }
}
