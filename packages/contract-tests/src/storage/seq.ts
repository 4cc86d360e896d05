import type { DocumentId, EntryId, Seq } from "@durably/core";
import {
  commitAll,
  commitOne,
  commitRaw,
  conversation,
  createDoc,
  entry,
  mintIds,
  retireDoc,
  rewindable,
  ROOT,
  scenario,
  show,
  withRoot,
  type RuleGroup,
} from "./support.js";

export const perBatchSeq: RuleGroup = {
  rule: "per-batch seq",
  scenarios: [
    scenario(
      "the first stored batch of a new storage gets seq 1 and every later batch a larger seq",
      async ({ storage, check }) => {
        const seqs = [
          ...(await commitAll(check, storage, [[conversation(ROOT)]])),
          ...(await commitAll(check, storage, [[], [], []])),
          ...(await commitAll(check, storage, [[]])),
        ];
        check.same(seqs[0], 1, `first seq of a new storage (seqs ${show(seqs)})`);
        check.ok(
          seqs.every((seq, i) => i === 0 || seq > (seqs[i - 1] as number)),
          `seqs must strictly increase, got ${show(seqs)}`,
        );
      },
    ),
    scenario(
      "receive is called once per stored batch, in index order, before commit resolves",
      async ({ storage, check }) => {
        let resolved = false;
        const calls: [number, number, boolean][] = [];
        const pending = storage.commit([[conversation(ROOT)], [], []], (index, seq) =>
          calls.push([index, seq, resolved]),
        );
        const result = await pending.then((r) => ((resolved = true), r));
        check.same(result.stored, 3, "stored count of a three-batch commit");
        check.equal(
          calls.map(([index]) => index),
          [0, 1, 2],
          `receive indexes, got calls ${show(calls)}`,
        );
        check.equal(
          calls.map(([, , late]) => late),
          [false, false, false],
          "receive must run before commit resolves",
        );
        const seqs = calls.map(([, seq]) => seq);
        check.ok(
          seqs[0]! < seqs[1]! && seqs[1]! < seqs[2]!,
          `each batch gets its own increasing seq, got ${show(seqs)}`,
        );
      },
    ),
    scenario("a refused batch and the batches after it get no seq", async ({ storage, check }) => {
      const { result, calls } = await commitRaw(storage, [
        [conversation(ROOT)],
        [conversation(ROOT)],
        [],
      ]);
      check.same(result.stored, 1, `stored count when batch 1 rewrites conversation ${ROOT}`);
      check.equal(
        calls.map(([index]) => index),
        [0],
        `receive calls ${show(calls)}: only batch 0 was stored`,
      );
    }),
    scenario(
      "entry(id).commitSeq is the seq of the batch that wrote the entry",
      async ({ storage, check }) => {
        const [a, b] = await mintIds(storage, 2);
        const [s1, s2] = await commitAll(check, storage, [
          [conversation(ROOT), entry(a!, ROOT)],
          [entry(b!, ROOT)],
        ]);
        check.same(
          (await storage.entry(a as EntryId))?.commitSeq,
          s1,
          `commitSeq of entry ${a} (written at seq ${s1})`,
        );
        check.same(
          (await storage.entry(b as EntryId))?.commitSeq,
          s2,
          `commitSeq of entry ${b} (written at seq ${s2})`,
        );
      },
    ),
    scenario(
      "a document's createdAt and retiredAt are the seqs of its creating and retiring batches",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [d] = await mintIds(storage, 1);
        const created = await commitOne(check, storage, [
          createDoc(d!, { n: 1 }, rewindable(ROOT)),
        ]);
        await commitOne(check, storage, []);
        const retired = await commitOne(check, storage, [retireDoc(d!)]);
        const read = await storage.document(d as DocumentId, created as Seq);
        check.equal(
          read && { createdAt: read.record.createdAt, retiredAt: read.record.retiredAt },
          { createdAt: created, retiredAt: retired },
          `document ${d} created at seq ${created}, retired at seq ${retired}`,
        );
      },
    ),
  ],
};
