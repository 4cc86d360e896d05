import type { EntryId } from "@durably/core";
import {
  commitAll,
  commitOne,
  conversation,
  createDoc,
  entry,
  mintIds,
  ROOT,
  scenario,
  show,
  submission,
  task,
  type RuleGroup,
} from "./support.js";

export const atomicBatches: RuleGroup = {
  rule: "atomic batches",
  scenarios: [
    scenario(
      "stores every write of a batch together, each kind readable after commit resolves",
      async ({ storage, check }) => {
        const [e, t, s, d] = await mintIds(storage, 4);
        await commitOne(check, storage, [
          conversation(ROOT),
          entry(e!, ROOT),
          task(t!, ROOT),
          submission(s!, ROOT),
          createDoc(d!, { text: "hi" }),
        ]);
        check.equal(
          await storage.conversation(ROOT),
          { id: ROOT },
          `conversation ${ROOT} of the batch`,
        );
        check.equal((await storage.entry(e as EntryId))?.entry.id, e, `entry ${e} of the batch`);
        check.equal((await storage.task(t as never))?.id, t, `task ${t} of the batch`);
        check.equal((await storage.submission(s as never))?.id, s, `submission ${s} of the batch`);
        check.equal(
          (await storage.document(d as never, "current"))?.value,
          { text: "hi" },
          `document ${d} of the batch`,
        );
      },
    ),
    scenario(
      "applies a batch's writes in order, so an entry may follow its conversation in the same batch",
      async ({ storage, check }) => {
        const [c, e] = await mintIds(storage, 2);
        await commitOne(check, storage, [conversation(ROOT), conversation(c!), entry(e!, c!)]);
        check.equal(
          (await storage.entry(e as EntryId))?.entry.conversationId,
          c,
          `entry ${e} in conversation ${c}`,
        );
      },
    ),
    scenario(
      "stores each batch of a multi-batch call whole, a later batch using an earlier one's records",
      async ({ storage, check }) => {
        const [c, e1, e2] = await mintIds(storage, 3);
        await commitAll(check, storage, [
          [conversation(ROOT), conversation(c!)],
          [entry(e1!, c!)],
          [entry(e2!, c!)],
        ]);
        const page = await storage.scanEntries(
          { conversationId: c as never, order: "ascending" },
          10,
        );
        check.equal(
          page.items.map((x) => x.id),
          [e1, e2],
          `entries of conversation ${c} after a three-batch call`,
        );
      },
    ),
    scenario("stores an empty batch and gives it its own seq", async ({ storage, check }) => {
      const [first, second] = await commitAll(check, storage, [[], []]);
      check.ok(
        first === 1 && (second as number) > 1,
        `two empty batches of a new storage: seqs [1, >1] expected, got ${show([first, second])}`,
      );
    }),
    scenario(
      "a commit whose signal is already aborted rejects with the signal's reason and stores nothing",
      async ({ storage, check }) => {
        const controller = new AbortController();
        const reason = new Error("caller gave up");
        controller.abort(reason);
        let rejection: unknown = "resolved";
        try {
          await storage.commit([[conversation(ROOT)]], () => undefined, {
            signal: controller.signal,
          });
        } catch (error) {
          rejection = error;
        }
        check.same(
          rejection,
          reason,
          "commit with an aborted signal should reject with signal.reason",
        );
        check.equal(
          await storage.conversation(ROOT),
          undefined,
          `conversation ${ROOT} after an aborted commit`,
        );
        const seq = await commitOne(
          check,
          storage,
          [conversation(ROOT)],
          "commit after the aborted one",
        );
        check.same(seq, 1, "the first stored batch still gets seq 1 after an aborted commit");
      },
    ),
  ],
};
