/**
 * A storage that does not declare `capabilities.persistent` has nothing of
 * persistence checked, so its persistence tests must say "skipped", not
 * "passed". Runs the registered persistence group with a recording runner
 * whose test context offers `skip(note)`, as Vitest's does.
 */
import type { Storage } from "@durably/core";
// By path, not by package name: see test/support/memory-handles.ts.
import { MemoryStorage } from "../../storage-memory/src/index.js";
import { describe, expect, it } from "vitest";
import { registerStorageConformance, storageScenarios } from "../src/index.js";
import { simpleFactory } from "./support/memory-handles.js";
import { runRegistered } from "./support/recording-runner.js";

function runPersistenceGroup(open: () => Storage) {
  return runRegistered((api) =>
    registerStorageConformance(api, "Recorded", simpleFactory(open), { rules: ["persistence"] }),
  );
}

/** MemoryStorage claiming a capability value of its choosing. */
function claiming(persistent: unknown): () => Storage {
  return () => {
    const storage = new MemoryStorage();
    Object.defineProperty(storage, "capabilities", { value: { persistent } });
    return storage;
  };
}

describe("persistence scenarios on a storage that is not persistent", () => {
  it("report every persistence test as skipped, with the reason, when the runner can skip", async () => {
    const outcomes = await runPersistenceGroup(() => new MemoryStorage());
    expect(outcomes.map((o) => o.name)).toEqual(storageScenarios.persistence);
    for (const outcome of outcomes)
      expect(outcome).toEqual({
        rule: "persistence",
        name: outcome.name,
        status: "skipped",
        note: "[persistence] the storage does not declare capabilities.persistent (false): persistence not checked",
      });
  });

  it("skip a storage without capabilities too", async () => {
    const outcomes = await runPersistenceGroup(claiming(undefined));
    expect(outcomes.map((o) => o.status)).toEqual(
      storageScenarios.persistence.map(() => "skipped"),
    );
  });

  it("still fail a storage whose capability is neither true, false nor absent", async () => {
    const outcomes = await runPersistenceGroup(claiming("yes"));
    for (const outcome of outcomes) {
      expect(outcome.status).toBe("failed");
      expect(String(outcome.error)).toContain(
        'capabilities.persistent must be true, false or absent, got "yes"',
      );
    }
  });
});
