import type { ConversationId, Session, Transaction } from "@durably/core";
import type { Check } from "../storage/support.js";
import { sessionScenario, type SessionRuleGroup, type SessionScenario } from "./api.js";
import type { FaultInjector } from "./faults.js";
import { entryKinds, nameOf, Notes, openSession, rejection, ROOT } from "./support.js";

/** An id no storage has a conversation for in these scenarios. */
const MISSING = 987_654_321 as ConversationId;

/** Lets every started operation settle (the storage's reads included) before the callback returns. */
function later(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 5));
}

interface FailingWrite {
  /** What the failing write is, for the scenario name. */
  readonly what: string;
  readonly errorName: string;
  start(tx: Transaction): Promise<unknown>;
}

const badValue: FailingWrite = {
  what: "a value that is not JSON (a bigint)",
  errorName: "TypeError",
  start: (tx) => tx.appendEntry(ROOT, { kind: "bad", data: [10n] as never }),
};

const unknownConversation: FailingWrite = {
  what: "an unknown conversation",
  errorName: "UnknownRecord",
  start: (tx) => tx.appendEntry(MISSING, { kind: "orphan" }),
};

/**
 * The callback appends "a" and edits the document, starts the failing write,
 * then waits until everything it started has settled and returns normally.
 */
async function expectWholeCommitFails(
  storage: FaultInjector,
  check: Check,
  failing: FailingWrite,
  callback: (tx: Transaction, fail: () => Promise<unknown>) => Promise<void>,
): Promise<void> {
  const session: Session = await openSession(storage, check);
  await session.commit(async (tx) => {
    (await tx.doc(Notes, ROOT)).text = "before";
  });
  const published: unknown[] = [];
  session.watchDoc(Notes, ROOT, (value) => published.push(value));
  session.subscribeCommits((event) => published.push(event.seq));
  const calls = storage.commitCalls.length;
  const error = await rejection(
    session.commit(async (tx) => {
      void tx.appendEntry(ROOT, { kind: "a", data: "a" });
      (await tx.doc(Notes, ROOT)).text = "changed by the failed commit";
      await callback(tx, () => failing.start(tx));
      await later();
    }),
  );
  check.equal(
    nameOf(error),
    failing.errorName,
    `the commit rejects with the failed write's error (${String(error)})`,
  );
  check.equal(
    storage.commitCalls.length,
    calls,
    "storage.commit calls made for the failed commit (expected none)",
  );
  check.equal(await entryKinds(storage), [], "entries stored by the failed commit");
  check.equal(
    await session.snapshot(Notes, ROOT),
    { text: "before", items: [] },
    "the document after the failed commit",
  );
  check.equal(published, [], "what watchers and commit subscribers saw of the failed commit");
  check.same(session.failed, undefined, "the session's failed state");
  await session.commit((tx) => tx.appendEntry(ROOT, { kind: "after" }));
  check.equal(await entryKinds(storage), ["after"], "entries after the next commit");
  await session.close();
}

function cases(failing: FailingWrite): SessionScenario[] {
  return [
    sessionScenario(
      `a write with ${failing.what} that the callback never awaited fails the whole commit, though it failed long before the callback returned`,
      ({ storage, check }) =>
        expectWholeCommitFails(storage, check, failing, async (_tx, fail) => {
          void fail();
          await later();
        }),
    ),
    sessionScenario(
      `a write with ${failing.what} that the callback awaited and caught still fails the whole commit`,
      ({ storage, check }) =>
        expectWholeCommitFails(storage, check, failing, async (_tx, fail) => {
          const caught = await rejection(fail());
          check.equal(nameOf(caught), failing.errorName, "the error the callback caught");
        }),
    ),
  ];
}

export const operationFailures: SessionRuleGroup = {
  rule: "operation failures",
  scenarios: [...cases(badValue), ...cases(unknownConversation)],
};
