import { sessionScenario, type SessionRuleGroup } from "./api.js";
import { entryKinds, nameOf, Notes, openSession, rejection, ROOT } from "./support.js";

export const atomicCommits: SessionRuleGroup = {
  rule: "atomic commits",
  scenarios: [
    sessionScenario(
      "a callback that appends an entry and edits a document then throws leaves no entry and the old document value",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        await session.commit(async (tx) => {
          (await tx.doc(Notes, ROOT)).text = "old";
        });
        const error = await rejection(
          session.commit(async (tx) => {
            await tx.appendEntry(ROOT, { kind: "doomed" });
            (await tx.doc(Notes, ROOT)).text = "new";
            throw new Error("the callback failed");
          }),
        );
        check.equal(
          error instanceof Error ? error.message : error,
          "the callback failed",
          "the commit rejects with the callback's error",
        );
        check.equal(await entryKinds(storage), [], "entries stored after the failed callback");
        check.equal(
          await session.snapshot(Notes, ROOT),
          { text: "old", items: [] },
          "the document after the failed callback",
        );
        await session.commit((tx) => tx.appendEntry(ROOT, { kind: "after" }));
        check.equal(
          await entryKinds(storage),
          ["after"],
          "the session goes on after a failed callback",
        );
        await session.close();
      },
    ),
    sessionScenario(
      "a callback whose value is not strict JSON is rejected before any storage call and the session stays usable",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        const calls = storage.commitCalls.length;
        const error = await rejection(
          session.commit((tx) => tx.appendEntry(ROOT, { kind: "bad", data: { items: [1, NaN] } })),
        );
        check.equal(nameOf(error), "TypeError", "appending NaN rejects with a TypeError");
        check.ok(
          String(error).includes("entry.data.items[1]"),
          `the error names the path, got ${String(error)}`,
        );
        check.equal(
          storage.commitCalls.length,
          calls,
          "storage.commit calls made for the rejected commit",
        );
        await session.commit((tx) => tx.appendEntry(ROOT, { kind: "good" }));
        check.equal(await entryKinds(storage), ["good"], "entries after the rejection");
        await session.close();
      },
    ),
  ],
};
