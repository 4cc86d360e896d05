import type { Storage } from "@durably/core";
import type { Reopen, StorageFactory, TestApi } from "../storage/api.js";
import { Check } from "../storage/support.js";
import type { SessionRule, SessionRuleGroup, SessionScenario } from "./api.js";
import { atomicCommits } from "./atomic-commits.js";
import { deferredProgress } from "./deferred-progress.js";
import { documents } from "./documents.js";
import { FaultInjector } from "./faults.js";
import { groupCommit } from "./group-commit.js";
import { indexLimits } from "./index-limits.js";
import { largeValues } from "./large-values.js";
import { operationFailures } from "./operation-failures.js";
import { readFailures } from "./read-failures.js";
import { storageFailure } from "./storage-failure.js";
import { valueLimits } from "./value-limits.js";

const GROUPS: readonly SessionRuleGroup[] = [
  atomicCommits,
  operationFailures,
  valueLimits,
  storageFailure,
  readFailures,
  groupCommit,
  documents,
  deferredProgress,
  indexLimits,
];

/** Groups a backend runs only when it asks for them (see `SessionConformanceOptions`). */
const OPT_IN: readonly SessionRuleGroup[] = [largeValues];

/** Every session scenario name, by rule group. */
export const sessionScenarios: Readonly<Record<SessionRule, readonly string[]>> = Object.freeze(
  Object.fromEntries(
    [...GROUPS, ...OPT_IN].map((g) => [g.rule, Object.freeze(g.scenarios.map((s) => s.name))]),
  ) as Record<SessionRule, readonly string[]>,
);

export interface SessionConformanceOptions {
  rules?: readonly SessionRule[];
  /**
   * Also run the "large values" group: concurrent commits near the size
   * limit whose sum is longer than a JavaScript string can be (hundreds of
   * megabytes written; about a gigabyte of memory). Worth it for backends
   * that serialise a whole storage call into one string or statement.
   */
  largeValues?: boolean;
}

async function run(
  api: TestApi,
  factory: StorageFactory,
  rule: string,
  s: SessionScenario,
): Promise<void> {
  let used = false;
  await factory(async (storage: Storage, reopen?: Reopen) => {
    used = true;
    await s.run({
      storage: new FaultInjector(storage),
      check: new Check(api.expect, `session: ${rule}`),
      ...(reopen ? { reopen } : {}),
    });
  });
  if (!used)
    throw new Error(`[session: ${rule}] the storage factory resolved without calling use(storage)`);
}

/**
 * Registers the session conformance suite: the seed
 * atomicity and failure scenarios, run by a real Session over the adapter
 * from `factory` (the same factory shape as `registerStorageConformance`).
 * Faults are injected by wrapping the adapter's Storage port.
 */
export function registerSessionConformance(
  api: TestApi,
  name: string,
  factory: StorageFactory,
  options: SessionConformanceOptions = {},
): void {
  const wanted = options.rules === undefined ? undefined : new Set<string>(options.rules);
  const groups = options.largeValues === true ? [...GROUPS, ...OPT_IN] : GROUPS;
  for (const group of groups) {
    if (wanted !== undefined && !wanted.has(group.rule)) continue;
    api.describe(`${name} > session > ${group.rule}`, () => {
      for (const s of group.scenarios)
        api.it(s.name, () => run(api, factory, group.rule, s), s.timeoutMs);
    });
  }
}
