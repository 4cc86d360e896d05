import { Scheduler, Session, type Storage } from "@durably/core";
import type { StorageFactory, TestApi } from "../storage/api.js";
import { Check } from "../storage/support.js";
import { abortAndCompleting } from "./abort.js";
import type { TaskRule, TaskRuleGroup, TaskScenario } from "./api.js";
import { blocked } from "./blocked.js";
import { cycles } from "./cycles.js";
import { DEFINITIONS } from "./definitions.js";
import { lifecycle } from "./lifecycle.js";
import { recovery } from "./recovery.js";
import { waiting } from "./waiting.js";

const GROUPS: readonly TaskRuleGroup[] = [
  lifecycle,
  waiting,
  cycles,
  abortAndCompleting,
  blocked,
  recovery,
];

/** Every task scenario name, by rule group. */
export const taskScenarios: Readonly<Record<TaskRule, readonly string[]>> = Object.freeze(
  Object.fromEntries(
    GROUPS.map((g) => [g.rule, Object.freeze(g.scenarios.map((s) => s.name))]),
  ) as Record<TaskRule, readonly string[]>,
);

export interface TaskConformanceOptions {
  rules?: readonly TaskRule[];
}

async function run(
  api: TestApi,
  factory: StorageFactory,
  rule: string,
  s: TaskScenario,
): Promise<void> {
  let used = false;
  await factory(async (storage: Storage, reopen) => {
    used = true;
    const current = { storage };
    await s.run({
      check: new Check(api.expect, `tasks: ${rule}`),
      reopen: reopen
        ? async () => {
            current.storage = await reopen();
            return current.storage;
          }
        : undefined,
      open: async () => {
        const session = await Session.open(current.storage);
        const scheduler = new Scheduler(session, DEFINITIONS);
        await scheduler.start();
        return { session, scheduler };
      },
    });
  });
  if (!used)
    throw new Error(`[tasks: ${rule}] the storage factory resolved without calling use(storage)`);
}

/**
 * Registers the task conformance suite: real tasks run by
 * a real Scheduler over a Session over the adapter from `factory` (the same
 * factory shape as `registerStorageConformance`; pass `reopen` to run the
 * recovery scenarios across a reopen).
 */
export function registerTaskConformance(
  api: TestApi,
  name: string,
  factory: StorageFactory,
  options: TaskConformanceOptions = {},
): void {
  const wanted = options.rules === undefined ? undefined : new Set<string>(options.rules);
  for (const group of GROUPS) {
    if (wanted !== undefined && !wanted.has(group.rule)) continue;
    api.describe(`${name} > tasks > ${group.rule}`, () => {
      for (const s of group.scenarios) api.it(s.name, () => run(api, factory, group.rule, s));
    });
  }
}
