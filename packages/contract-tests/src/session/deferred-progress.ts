import { sessionScenario, type SessionRuleGroup } from "./api.js";
import { entryKinds, Notes, openSession, ROOT } from "./support.js";

export const deferredProgress: SessionRuleGroup = {
  rule: "deferred progress",
  scenarios: [
    sessionScenario(
      "deferred commits are published at once and stored coalesced, before the next ordinary commit",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        await session.commit(async (tx) => void (await tx.doc(Notes, ROOT)));
        const seen: string[] = [];
        session.watchDoc(Notes, ROOT, (v) => seen.push(v?.text ?? "-"));
        const calls = storage.commitCalls.length;
        for (const chunk of ["a", "b", "c"])
          await session.commit(async (tx) => void ((await tx.doc(Notes, ROOT)).text += chunk), {
            durability: "deferred",
          });
        check.equal(seen, ["a", "ab", "abc"], "watchers see deferred progress at once");
        check.equal(
          storage.commitCalls.length,
          calls,
          "storage calls before the next ordinary commit",
        );
        const types: string[][] = [];
        session.subscribeCommits((e) => types.push(e.writes.map((w) => w.type)));
        await session.commit((tx) => tx.appendEntry(ROOT, { kind: "done" }));
        check.equal(
          types,
          [["document.change"], ["entry"]],
          "batches stored: the coalesced progress first, then the ordinary commit",
        );
        check.equal(await entryKinds(storage), ["done"], "entries");
        const record = await storage.inner.findDocument(
          { kind: Notes.kind, scope: { kind: "conversation", conversationId: ROOT } },
          "current",
        );
        check.equal(
          record ? (await storage.inner.document(record.id, "current"))?.value : undefined,
          { text: "abc", items: [] },
          "stored value",
        );
        await session.close();
      },
    ),
    sessionScenario("close() stores pending deferred progress", async ({ storage, check }) => {
      const session = await openSession(storage, check);
      await session.commit(async (tx) => void ((await tx.doc(Notes, ROOT)).text = "x"), {
        durability: "deferred",
      });
      const calls = storage.commitCalls.length;
      await session.close();
      check.equal(storage.commitCalls.length, calls + 1, "storage calls made by close()");
    }),
  ],
};
