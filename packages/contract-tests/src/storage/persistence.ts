import type { Batch, DocumentId, EntryId, Seq, SubmissionId, TaskId } from "@durably/core";
import {
  commitAll,
  commitOne,
  conversation,
  createDoc,
  delta,
  entry,
  mintIds,
  retireDoc,
  rewindable,
  ROOT,
  scenario,
  show,
  submission,
  task,
  type RuleGroup,
  type ScenarioContext,
} from "./support.js";

/**
 * Persistence scenarios run only for storages that declare
 * `capabilities.persistent`. For the others they check that the capability
 * is well formed (`false` or absent), then report the test skipped, never
 * passed: nothing about persistence was checked.
 */
function persistent(context: ScenarioContext): boolean {
  const declared = context.storage.capabilities?.persistent;
  if (declared !== true) {
    context.check.ok(
      declared === undefined || declared === false,
      `capabilities.persistent must be true, false or absent, got ${show(declared)}; persistence is checked only when true`,
    );
    context.skip(
      `the storage does not declare capabilities.persistent (${show(declared)}): persistence not checked`,
    );
    return false;
  }
  if (!context.canReopen)
    context.check.fail(
      "the storage declares capabilities.persistent but the factory passed no reopen() to use()",
    );
  return true;
}

/**
 * A task and a submission replaced twice in one commit call, both
 * replacements in one batch or one in each of two batches: reads before and
 * after reopen give the last value. An adapter that appends each write and
 * picks "the" record of a call on open must pick the last one.
 */
function replacedTwiceInOneCall(shape: "one batch" | "two batches") {
  return scenario(
    `a task and a submission replaced twice in one commit call (${shape}) reopen with the last value`,
    async (context) => {
      if (!persistent(context)) return;
      const { check } = context;
      const [t, s] = await mintIds(context.storage, 2);
      const version = (checkpoint: string, status: "queued" | "placed"): Batch => [
        task(t!, ROOT, { state: { status: "running", checkpoint } }),
        submission(s!, ROOT, { status, requestId: `request ${checkpoint}` }),
      ];
      await commitOne(check, context.storage, [conversation(ROOT), ...version("first", "queued")]);
      const second = version("second", "queued");
      const third = version("third", "placed");
      if (shape === "one batch")
        await commitOne(check, context.storage, [...second, ...third], "commit both replacements");
      else await commitAll(check, context.storage, [second, third], "commit both replacements");
      const last = async (storage: typeof context.storage) => ({
        task: (await storage.task(t as TaskId))?.state,
        submission: await storage.submission(s as SubmissionId),
      });
      const expected = {
        task: { status: "running", checkpoint: "third" },
        submission: {
          id: s,
          conversationId: ROOT,
          type: "input",
          status: "placed",
          requestId: "request third",
        },
      };
      check.equal(
        await last(context.storage),
        expected,
        `task ${t} and submission ${s} before reopen`,
      );
      const reopened = await check.resolves(context.reopen(), "reopen");
      check.equal(
        await last(reopened),
        expected,
        `task ${t} and submission ${s} after reopen (replaced twice in one call, ${shape})`,
      );
    },
  );
}

export const persistence: RuleGroup = {
  rule: "persistence",
  scenarios: [
    scenario("committed records survive close and reopen", async (context) => {
      if (!persistent(context)) return;
      const { check } = context;
      const [e, t, d] = await mintIds(context.storage, 3);
      await commitOne(check, context.storage, [
        conversation(ROOT),
        entry(e!, ROOT),
        task(t!, ROOT),
        createDoc(d!, { n: 1 }),
      ]);
      await context.storage.close();
      const reopened = await check.resolves(context.reopen(), "reopen");
      check.equal(
        {
          conversation: await reopened.conversation(ROOT),
          entry: (await reopened.entry(e as EntryId))?.entry.id,
          task: (await reopened.task(t as TaskId))?.id,
          document: (await reopened.document(d as DocumentId, "current"))?.value,
        },
        { conversation: { id: ROOT }, entry: e, task: t, document: { n: 1 } },
        "records after reopen",
      );
    }),
    scenario("ids are never reused and seqs keep increasing across reopen", async (context) => {
      if (!persistent(context)) return;
      const { check } = context;
      const minted = await mintIds(context.storage, 3);
      const explicit = Math.max(...minted) + 1000;
      const seqs = await commitAll(check, context.storage, [
        [conversation(ROOT), entry(minted[0]!, ROOT)],
        [entry(explicit, ROOT), task(minted[1]!, ROOT)],
      ]);
      const used = [ROOT, minted[0]!, minted[1]!, explicit];
      const reopened = await check.resolves(context.reopen(), "reopen");
      const after = await mintIds(reopened, 50);
      check.equal(
        after.filter((id) => used.includes(id) || id <= 1),
        [],
        `ids minted after reopen colliding with committed ${show(used)}`,
      );
      const next = await commitOne(
        check,
        reopened,
        [entry(after[0]!, ROOT)],
        "commit after reopen",
      );
      check.ok(next > (seqs[1] as number), `seq after reopen must exceed ${seqs[1]}, got ${next}`);
      const again = await check.resolves(context.reopen(), "second reopen");
      const last = await commitOne(check, again, [], "commit after the second reopen");
      check.ok(last > next, `seq after the second reopen must exceed ${next}, got ${last}`);
    }),
    scenario("document history and retirement survive reopen", async (context) => {
      if (!persistent(context)) return;
      const { check } = context;
      const [r, c] = await mintIds(context.storage, 2);
      const [s1, s2] = await commitAll(check, context.storage, [
        [
          conversation(ROOT),
          createDoc(r!, { n: 1 }, rewindable(ROOT)),
          createDoc(c!, { n: 1 }, { kind: "current-only" }),
        ],
        [delta(r!, 1, ["s", ["n"], 2]), delta(c!, 1, ["s", ["n"], 2])],
      ]);
      const s3 = await commitOne(check, context.storage, [retireDoc(r!)]);
      const reopened = await check.resolves(context.reopen(), "reopen");
      check.equal(
        {
          rewindAtS1: (await reopened.document(r as DocumentId, s1 as Seq))?.value,
          rewindAtS2: (await reopened.document(r as DocumentId, s2 as Seq))?.value,
          rewindCurrent: await reopened.document(r as DocumentId, "current"),
          retiredAt: (await reopened.document(r as DocumentId, s2 as Seq))?.record.retiredAt,
          currentOnly: (await reopened.document(c as DocumentId, "current"))?.value,
        },
        {
          rewindAtS1: { n: 1 },
          rewindAtS2: { n: 2 },
          rewindCurrent: undefined,
          retiredAt: s3,
          currentOnly: { n: 2 },
        },
        `documents ${r} (rewindable, retired at ${s3}) and ${c} (current-only) after reopen`,
      );
    }),
    replacedTwiceInOneCall("one batch"),
    replacedTwiceInOneCall("two batches"),
  ],
};
