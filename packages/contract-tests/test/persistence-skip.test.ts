/**
 * A storage that does not declare `capabilities.persistent` has nothing of
 * persistence checked, so its persistence tests must say "skipped", not
 * "passed". Runs the registered persistence group with a recording runner
 * whose test context offers `skip(note)`, as Vitest's does.
 */
import type { Storage } from "@durably/core";
// By path, not by package name: see broken-adapters.test.ts.
import { MemoryStorage } from "../../storage-memory/src/index.js";
import { describe, expect, it } from "vitest";
import { registerStorageConformance, storageScenarios, type TestApi } from "../src/index.js";

interface Outcome {
  name: string;
  status: "passed" | "skipped" | "failed";
  note?: string;
}

class Skipped extends Error {}

async function runPersistenceGroup(open: () => Storage): Promise<Outcome[]> {
  const tests: { name: string; body: (...context: unknown[]) => Promise<void> }[] = [];
  const api: TestApi = {
    describe: (_name, body) => body(),
    it: (name, body) => tests.push({ name, body }),
    expect,
  };
  registerStorageConformance(
    api,
    "Recorded",
    async (use) => {
      const storage = open();
      try {
        await use(storage);
      } finally {
        await storage.close();
      }
    },
    { rules: ["persistence"] },
  );
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
      outcomes.push({ name: test.name, status: "passed" });
    } catch (error) {
      outcomes.push(
        error instanceof Skipped
          ? { name: test.name, status: "skipped", note }
          : { name: test.name, status: "failed", note: String(error) },
      );
    }
  }
  return outcomes;
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
      expect(outcome.note).toContain(
        'capabilities.persistent must be true, false or absent, got "yes"',
      );
    }
  });
});
