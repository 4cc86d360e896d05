import { BatchRefused } from "@durably/core";
import { sessionScenario, type SessionRuleGroup } from "./api.js";
import { entryKinds, nameOf, openSession, rejection, ROOT } from "./support.js";

export const storageFailure: SessionRuleGroup = {
  rule: "storage failure",
  scenarios: [
    sessionScenario(
      "a rejected storage.commit fails the session: the commit and every later call reject with SessionFailed",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        const cause = new Error("injected: the disk went away");
        storage.nextCommit = () => Promise.reject(cause);
        const error = await rejection(
          session.commit((tx) => tx.appendEntry(ROOT, { kind: "lost" })),
        );
        check.equal(nameOf(error), "SessionFailed", "the commit whose storage call rejected");
        check.same(
          (error as Error).cause,
          cause,
          "SessionFailed carries the storage error as its cause",
        );
        check.equal(
          nameOf(await rejection(session.commit(() => 1))),
          "SessionFailed",
          "a later commit",
        );
        check.equal(
          nameOf(await rejection(session.read.conversation(ROOT))),
          "SessionFailed",
          "a later read",
        );
        await session.close();
      },
    ),
    sessionScenario(
      "a refusal stores and publishes the earlier batches; the refused and later ones are not, and the session fails",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        storage.commitDelayMs = 10;
        const first = session.commit((tx) => tx.appendEntry(ROOT, { kind: "first" }));
        await new Promise((resolve) => setTimeout(resolve, 1));
        const a = session.commit((tx) => tx.appendEntry(ROOT, { kind: "a" }));
        const b = session.commit((tx) => tx.appendEntry(ROOT, { kind: "b" }));
        const c = session.commit((tx) => tx.appendEntry(ROOT, { kind: "c" }));
        await first;
        const refused = new BatchRefused("immutable-record", 1, 0, "injected refusal of batch 1");
        storage.nextCommit = async (batches, receive) => {
          const result = await storage.inner.commit(batches.slice(0, 1), receive);
          return { stored: result.stored, refused };
        };
        const [ra, rb, rc] = await Promise.allSettled([a, b, c]);
        check.equal(storage.commitCalls.at(-1), 3, "batches in the storage call carrying a, b, c");
        check.equal(ra?.status, "fulfilled", "the batch before the refused one resolves");
        for (const [what, r] of [
          ["b (refused)", rb],
          ["c (after the refused one)", rc],
        ] as const) {
          const reason = r?.status === "rejected" ? (r.reason as Error) : undefined;
          check.equal(nameOf(reason), "SessionFailed", `commit ${what}`);
          check.same(reason?.cause, refused, `commit ${what} carries the refusal as its cause`);
        }
        check.equal(await entryKinds(storage), ["first", "a"], "entries stored");
        await session.close();
      },
    ),
  ],
};
