import type { Storage } from "@durably/core";
import { CrashChild, moduleUrl } from "./child-process.js";
import { check, CrashCheckFailed, describeError, withReplay } from "./failure.js";
import { Ledger } from "./ledger.js";
import { commitOwnStep } from "./own-commit.js";
import { isDurablyError, withTempStorage } from "./temp-storage.js";
import type { CrashConformanceOptions } from "./types.js";
import { setUpCommitters } from "./workload.js";

const CHILD_TIMEOUT_MS = 30_000;
/** A refused second open must not hang; a lock wait this long is a hang. */
const SECOND_OPEN_TIMEOUT_MS = 10_000;
/** "At once" after the owner died: no lease to wait out. Generous for a loaded box. */
const REOPEN_AFTER_KILL_MS = 5_000;

type Settled =
  | { kind: "opened"; storage: Storage }
  | { kind: "rejected"; error: unknown }
  | { kind: "timed-out" };

async function settleWithin(open: Promise<Storage>, ms: number): Promise<Settled> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Settled>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "timed-out" }), ms);
  });
  try {
    return await Promise.race([
      open.then(
        (storage): Settled => ({ kind: "opened", storage }),
        (error: unknown): Settled => ({ kind: "rejected", error }),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Rule 9 across processes: a child owns the storage (alive, idle); a second
 * open here must fail with `StorageLocked`, leave the owner working and the
 * data unchanged; once the owner is SIGKILLed, one open succeeds at once.
 */
export async function runSingleOwner(options: CrashConformanceOptions): Promise<void> {
  await withTempStorage(async (path) => {
    const ids = await setUpCommitters(await options.open(path), 1);
    const ledger = new Ledger(ids);
    const child = new CrashChild(
      { childModule: moduleUrl(options.childModule), path, committers: ids, mode: "command" },
      options.nodeArgs ?? [],
    );
    let storage: Storage | undefined;
    try {
      await child.ready(CHILD_TIMEOUT_MS);
      await child.commit(3, CHILD_TIMEOUT_MS);

      const second = await settleWithin(options.open(path), SECOND_OPEN_TIMEOUT_MS);
      if (second.kind === "opened") {
        await second.storage.close();
        throw new CrashCheckFailed(
          "single owner",
          `a second open succeeded while process ${child.pid} owns the storage`,
        );
      }
      check(
        second.kind === "rejected",
        "single owner",
        () =>
          `a second open while process ${child.pid} owns the storage neither failed nor succeeded within ${SECOND_OPEN_TIMEOUT_MS} ms`,
      );
      check(
        isDurablyError(second.error, "StorageLocked", "STORAGE_LOCKED"),
        "single owner",
        () =>
          `a second open while process ${child.pid} owns the storage rejected with ${describeError(second.error)}, expected StorageLocked`,
      );

      // The refused open changed nothing for the owner: it still commits.
      await child.commit(2, CHILD_TIMEOUT_MS);
      check(child.alive, "single owner", () => "the owner died after a second open was refused");

      await child.kill();
      const started = Date.now();
      try {
        storage = await options.open(path);
      } catch (error) {
        throw new CrashCheckFailed(
          "single owner",
          `the first open after the owner was SIGKILLed rejected: ${describeError(error)}`,
          { cause: error },
        );
      }
      const waited = Date.now() - started;
      check(
        waited <= REOPEN_AFTER_KILL_MS,
        "single owner",
        () => `the first open after the owner was SIGKILLed took ${waited} ms (a lease?)`,
      );

      // Exactly the owner's five commits are stored, whole.
      await ledger.verify(storage, {
        acks: child.acks,
        intents: child.intents,
        nextSteps: child.nextSteps,
      });
      check(
        ledger.stats.storedUnacknowledged === 0,
        "single owner",
        () =>
          `${ledger.stats.storedUnacknowledged} commits appeared that the owner never acknowledged`,
      );
      const state = ledger.committers[0];
      if (state === undefined) throw new RangeError("no committer 0");
      const own = storage;
      storage = undefined;
      ledger.adoptOwnCommit(await commitOwnStep(own, state.ids, 0, state.top.step + 1));
      storage = await options.open(path);
      await ledger.verifyWholeHistory(storage);
    } catch (error) {
      throw withReplay(error, `single-owner scenario, owner pid ${child.pid}`);
    } finally {
      await child.kill();
      if (storage !== undefined) await storage.close();
    }
  });
}
