import { sessionScenario, type SessionRuleGroup } from "./api.js";
import { entryKinds, openSession, ROOT } from "./support.js";

export const groupCommit: SessionRuleGroup = {
  rule: "group commit",
  scenarios: [
    sessionScenario(
      "concurrent commits are coalesced into fewer storage.commit calls, each batch with its own seq",
      async ({ storage, check }) => {
        const session = await openSession(storage, check);
        storage.commitDelayMs = 3;
        const before = storage.commitCalls.length;
        const seqs: number[] = [];
        session.subscribeCommits((e) => seqs.push(e.seq));
        const n = 16;
        const entries = await Promise.all(
          Array.from({ length: n }, (_, i) =>
            session.commit((tx) => tx.appendEntry(ROOT, { kind: `c${i}` })),
          ),
        );
        const calls = storage.commitCalls.length - before;
        check.ok(
          calls < n / 2,
          `${n} concurrent commits took ${calls} storage.commit calls; expected fewer than ${n / 2}`,
        );
        check.equal(
          new Set(seqs).size,
          n,
          `distinct seqs of ${n} batches: ${JSON.stringify(seqs)}`,
        );
        check.ok(
          seqs.every((s, i) => i === 0 || s > (seqs[i - 1] as number)),
          `seqs increase: ${JSON.stringify(seqs)}`,
        );
        for (const [i, entry] of entries.entries()) {
          const stored = await storage.inner.entry(entry.id);
          check.equal(
            stored?.commitSeq,
            seqs[i],
            `entry ${entry.id} of commit ${i} is stored with its own batch's seq`,
          );
        }
        check.equal(
          await entryKinds(storage),
          Array.from({ length: n }, (_, i) => `c${i}`),
          "entries in commit order",
        );
        await session.close();
      },
    ),
  ],
};
