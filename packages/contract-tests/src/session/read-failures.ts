import { sessionScenario, type SessionRuleGroup } from "./api.js";
import { entryKinds, nameOf, openSession, rejection, ROOT } from "./support.js";

export const readFailures: SessionRuleGroup = {
  rule: "read failures",
  scenarios: [
    sessionScenario(
      "a StorageRequestError only fails its read; the session goes on",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        const badLimit = await rejection(session.read.scanEntries({ conversationId: ROOT }, 0));
        check.equal(
          nameOf(badLimit),
          "StorageRequestError",
          "scanEntries with limit 0 outside a commit",
        );
        const inCommit = await rejection(
          session.commit((tx) => tx.scanTasks({ nope: true } as never, 10)),
        );
        check.equal(
          nameOf(inCommit),
          "StorageRequestError",
          "scanTasks with an unknown query field inside a commit",
        );
        await session.commit((tx) => tx.appendEntry(ROOT, { kind: "after" }));
        check.equal(
          await entryKinds(storage),
          ["after"],
          "the session goes on after the failed reads",
        );
        check.same(session.failed, undefined, "session.failed after StorageRequestErrors");
        await session.close();
      },
    ),
    sessionScenario(
      "any other read failure rejects that read and the session goes on",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        storage.failScanEntriesWith = new Error("injected transient read failure");
        check.equal(
          nameOf(await rejection(session.read.scanEntries({ conversationId: ROOT }, 5))),
          "Error",
          "the failed read",
        );
        await session.commit((tx) => tx.appendEntry(ROOT, { kind: "after" }));
        check.equal(await entryKinds(storage), ["after"], "entries after the failed read");
        await session.close();
      },
    ),
  ],
};
