import { Session } from "@durably/core";
import type { EntryId, Storage } from "@durably/core";
import { check } from "./failure.js";
import { ObservedStorage } from "./observed-storage.js";
import type { Ack, CommitterIds } from "./protocol.js";
import { commitStep, stepOfEntry } from "./workload.js";

/**
 * The parent's own step commit over a reopened storage, through a Session:
 * proves the storage keeps working after a crash. Closes the session and
 * with it the storage.
 */
export async function commitOwnStep(
  storage: Storage,
  ids: CommitterIds,
  committer: number,
  step: number,
): Promise<Ack> {
  const observed = new ObservedStorage(storage);
  const session = await Session.open(observed);
  try {
    const entryId = await commitStep(session, ids, committer, step);
    const seq = observed.seqOf(committer, step);
    const stored = await storage.entry(entryId as EntryId);
    const mark = stored === undefined ? undefined : stepOfEntry(stored.entry);
    check(
      mark?.step === step && mark.committer === committer,
      "the storage keeps working after a crash",
      () =>
        `a commit after reopen resolved (entry ${entryId}) but entry(${entryId}) reads ${JSON.stringify(stored)}`,
    );
    check(
      seq === undefined || stored?.commitSeq === seq,
      "the storage keeps working after a crash",
      () =>
        `a commit after reopen received seq ${seq} but entry(${entryId}).commitSeq is ${stored?.commitSeq}`,
    );
    return { committer, step, entryId, seq };
  } finally {
    await session.close();
  }
}
