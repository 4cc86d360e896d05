import { sessionScenario, type SessionRuleGroup } from "./api.js";
import { Notes, openSession, ROOT } from "./support.js";

export const documents: SessionRuleGroup = {
  rule: "documents",
  scenarios: [
    sessionScenario(
      "a document round-trips: created as a base, changed by deltas, read back by the storage the same",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        const kinds: string[] = [];
        session.subscribeCommits((e) => {
          for (const w of e.writes)
            if (w.type === "document.create") kinds.push("create");
            else if (w.type === "document.change") kinds.push(w.content.kind);
        });
        await session.commit(async (tx) => {
          (await tx.doc(Notes, ROOT)).text = "hello";
        });
        await session.commit(async (tx) => {
          const d = await tx.doc(Notes, ROOT);
          d.text += ", world";
          d.items.push(1, 2, 3);
          d.items.reverse();
        });
        check.equal(kinds, ["create", "delta"], "content writes of the two commits");
        const expected = { text: "hello, world", items: [3, 2, 1] };
        check.equal(await session.snapshot(Notes, ROOT), expected, "snapshot");
        const record = await storage.inner.findDocument(
          { kind: Notes.kind, scope: { kind: "conversation", conversationId: ROOT } },
          "current",
        );
        const stored = record ? await storage.inner.document(record.id, "current") : undefined;
        check.equal(stored?.value, expected, "the storage's materialised value (base plus deltas)");
        check.equal(stored?.deltasSinceBase, 1, "deltas since the base");
        await session.close();
      },
    ),
  ],
};
