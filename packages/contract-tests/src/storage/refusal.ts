import type {
  Batch,
  DocumentId,
  EntryId,
  Storage,
  StorageWrite,
  SubmissionId,
  TaskId,
} from "@durably/core";
import {
  base,
  commitAll,
  commitOne,
  commitRefused,
  conversation,
  copyDoc,
  createDoc,
  delta,
  entry,
  mintIds,
  retireDoc,
  ROOT,
  scenario,
  show,
  submission,
  task,
  withRoot,
  type Check,
  type RuleGroup,
} from "./support.js";

/** Commits `[okBatch, refusedBatch]`; checks the refusal, that batch 0 is stored and the refused write's id is absent. */
async function refusedAfterOk(
  check: Check,
  storage: Storage,
  bad: Batch,
  reason: string,
  what: string,
): Promise<void> {
  const [marker] = await mintIds(storage, 1);
  await commitRefused(check, storage, [[entry(marker!, ROOT)], bad], reason, 1, what);
  check.ok(
    (await storage.entry(marker as EntryId)) !== undefined,
    `${what}: entry ${marker} of the stored batch 0 must stay stored`,
  );
}

export const refusal: RuleGroup = {
  rule: "refusal",
  scenarios: [
    scenario(
      "earlier batches stay stored, the refused batch and every later one leave no trace",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [a, b, t, d, c] = await mintIds(storage, 5);
        await commitRefused(
          check,
          storage,
          [
            [entry(a!, ROOT)],
            [entry(b!, ROOT), task(t!, ROOT), createDoc(d!, { x: 1 }), entry(c!, 999_999)],
            [entry(c!, ROOT)],
          ],
          "unknown-conversation",
          1,
          `commit([entry ${a}], [entry ${b}, task ${t}, document ${d}, entry ${c} of unknown conversation], [entry ${c}])`,
        );
        check.ok((await storage.entry(a as EntryId)) !== undefined, `entry ${a} of stored batch 0`);
        check.equal(
          await storage.entry(b as EntryId),
          undefined,
          `entry ${b} written before the bad write of the refused batch`,
        );
        check.equal(await storage.task(t as TaskId), undefined, `task ${t} of the refused batch`);
        check.equal(
          await storage.document(d as DocumentId, "current"),
          undefined,
          `document ${d} of the refused batch`,
        );
        check.equal(
          await storage.entry(c as EntryId),
          undefined,
          `entry ${c} of the batch after the refused one`,
        );
        const page = await storage.scanEntries({ conversationId: ROOT }, 10);
        check.equal(
          page.items.map((x) => x.id),
          [a],
          `scanEntries(${ROOT}) after the refusal`,
        );
        // The refused writes were never stored, so writing them again is accepted.
        await commitOne(
          check,
          storage,
          [entry(b!, ROOT), task(t!, ROOT), createDoc(d!, { x: 1 })],
          "re-commit the refused writes",
        );
      },
    ),
    scenario(
      "the refusal is a BatchRefused naming its reason, batch index and write index",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [a, b, c] = await mintIds(storage, 3);
        const { result } = await commitRefused(
          check,
          storage,
          [[entry(a!, ROOT)], [entry(b!, ROOT), entry(c!, 424_242)]],
          "unknown-conversation",
          1,
          "refused batch 1",
        );
        const refused = result.refused as Error & { code?: string; writeIndex?: number };
        check.equal(
          {
            name: refused.name,
            code: refused.code,
            writeIndex: refused.writeIndex,
            isError: refused instanceof Error,
          },
          { name: "BatchRefused", code: "BATCH_REFUSED", writeIndex: 1, isError: true },
          `refused batch 1 at write 1: ${show(refused)}`,
        );
      },
    ),
    scenario("refuses a malformed write as invalid-write", async ({ storage, check }) => {
      await withRoot(check, storage);
      const [e] = await mintIds(storage, 1);
      const malformed: [string, StorageWrite][] = [
        [
          "an entry without a kind",
          { type: "entry", value: { id: e, conversationId: ROOT } } as unknown as StorageWrite,
        ],
        [
          "an unknown write type",
          { type: "nonsense", value: { id: e } } as unknown as StorageWrite,
        ],
        ["an entry with id 0", entry(0, ROOT)],
        ["a delta with a malformed op", delta(e!, 1, ["zz", []] as never)],
      ];
      for (const [what, write] of malformed)
        await refusedAfterOk(check, storage, [write], "invalid-write", what);
    }),
    scenario(
      "refuses rewriting a stored conversation or entry as immutable-record",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [e] = await mintIds(storage, 1);
        await commitOne(check, storage, [entry(e!, ROOT, { kind: "first" })]);
        await refusedAfterOk(
          check,
          storage,
          [conversation(ROOT)],
          "immutable-record",
          `rewrite conversation ${ROOT}`,
        );
        await refusedAfterOk(
          check,
          storage,
          [entry(e!, ROOT, { kind: "second" })],
          "immutable-record",
          `rewrite entry ${e}`,
        );
        check.same(
          (await storage.entry(e as EntryId))?.entry.kind,
          "first",
          `entry ${e} keeps its first value`,
        );
      },
    ),
    scenario(
      "refuses an entry written twice in one batch or in two batches of one call as immutable-record",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [e, f] = await mintIds(storage, 2);
        await commitRefused(
          check,
          storage,
          [[entry(e!, ROOT), entry(e!, ROOT)]],
          "immutable-record",
          0,
          `entry ${e} twice in one batch`,
        );
        await commitRefused(
          check,
          storage,
          [[entry(f!, ROOT)], [entry(f!, ROOT)]],
          "immutable-record",
          1,
          `entry ${f} in batches 0 and 1`,
        );
      },
    ),
    scenario(
      "refuses creating or copying a document with the id of an existing incarnation as duplicate-id",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [d, other] = await mintIds(storage, 2);
        await commitOne(check, storage, [createDoc(d!, { n: 1 }, { kind: "a" })]);
        await refusedAfterOk(
          check,
          storage,
          [createDoc(d!, { n: 2 }, { kind: "b" })],
          "duplicate-id",
          `create document ${d} again`,
        );
        await commitOne(check, storage, [createDoc(other!, { n: 3 }, { kind: "c" })]);
        await refusedAfterOk(
          check,
          storage,
          [copyDoc(d!, other!, "current", { kind: "d" })],
          "duplicate-id",
          `copy onto document id ${d}`,
        );
        await commitOne(check, storage, [retireDoc(d!)]);
        await refusedAfterOk(
          check,
          storage,
          [createDoc(d!, { n: 4 }, { kind: "e" })],
          "duplicate-id",
          `create retired document id ${d} again`,
        );
      },
    ),
    scenario(
      "refuses an entry, task, submission or fork naming an unknown conversation as unknown-conversation",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [x, missing, e] = await mintIds(storage, 3);
        await commitOne(check, storage, [entry(e!, ROOT)]);
        await refusedAfterOk(
          check,
          storage,
          [entry(x!, missing!)],
          "unknown-conversation",
          `entry of unknown conversation ${missing}`,
        );
        await refusedAfterOk(
          check,
          storage,
          [task(x!, missing!)],
          "unknown-conversation",
          `task of unknown conversation ${missing}`,
        );
        await refusedAfterOk(
          check,
          storage,
          [submission(x!, missing!)],
          "unknown-conversation",
          `submission of unknown conversation ${missing}`,
        );
        await refusedAfterOk(
          check,
          storage,
          [conversation(x!, { parent: { conversationId: missing as never, at: e as EntryId } })],
          "unknown-conversation",
          `conversation forking unknown conversation ${missing}`,
        );
      },
    ),
    scenario(
      "refuses changing or retiring an unknown document as unknown-document",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [d] = await mintIds(storage, 1);
        await refusedAfterOk(
          check,
          storage,
          [base(d!, 1, {})],
          "unknown-document",
          `base for unknown document ${d}`,
        );
        await refusedAfterOk(
          check,
          storage,
          [delta(d!, 1, ["r", 1])],
          "unknown-document",
          `delta for unknown document ${d}`,
        );
        await refusedAfterOk(
          check,
          storage,
          [retireDoc(d!)],
          "unknown-document",
          `retire unknown document ${d}`,
        );
      },
    ),
    scenario(
      "refuses a copy whose source is unknown or not live at source.at as unknown-document",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [src, copy, missing] = await mintIds(storage, 3);
        const before = await commitOne(check, storage, []);
        await commitOne(check, storage, [createDoc(src!, { n: 1 }, { kind: "src" })]);
        await refusedAfterOk(
          check,
          storage,
          [copyDoc(copy!, missing!, "current", { kind: "copy" })],
          "unknown-document",
          `copy of unknown document ${missing}`,
        );
        await refusedAfterOk(
          check,
          storage,
          [copyDoc(copy!, src!, before, { kind: "copy" })],
          "unknown-document",
          `copy of document ${src} at seq ${before}, before it was created`,
        );
        await commitOne(check, storage, [retireDoc(src!)]);
        await refusedAfterOk(
          check,
          storage,
          [copyDoc(copy!, src!, "current", { kind: "copy" })],
          "unknown-document",
          `copy of retired document ${src} at current`,
        );
      },
    ),
    scenario(
      "refuses changing or retiring a retired document as retired-document",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [d] = await mintIds(storage, 1);
        await commitAll(check, storage, [[createDoc(d!, { n: 1 })], [retireDoc(d!)]]);
        await refusedAfterOk(
          check,
          storage,
          [delta(d!, 1, ["s", ["n"], 2])],
          "retired-document",
          `delta for retired document ${d}`,
        );
        await refusedAfterOk(
          check,
          storage,
          [base(d!, 1, { n: 3 })],
          "retired-document",
          `base for retired document ${d}`,
        );
        await refusedAfterOk(
          check,
          storage,
          [retireDoc(d!)],
          "retired-document",
          `retire document ${d} twice`,
        );
      },
    ),
    scenario(
      "refuses creating or copying onto an address with a live incarnation as address-occupied",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [d, other, x, keyed] = await mintIds(storage, 4);
        await commitOne(check, storage, [
          createDoc(d!, { n: 1 }, { kind: "notes" }),
          createDoc(other!, { n: 2 }, { kind: "other" }),
        ]);
        await refusedAfterOk(
          check,
          storage,
          [createDoc(x!, { n: 3 }, { kind: "notes" })],
          "address-occupied",
          `create at the address of live document ${d}`,
        );
        await refusedAfterOk(
          check,
          storage,
          [copyDoc(x!, other!, "current", { kind: "notes" })],
          "address-occupied",
          `copy onto the address of live document ${d}`,
        );
        await refusedAfterOk(
          check,
          storage,
          [
            createDoc(x!, { n: 4 }, { kind: "fresh" }),
            createDoc(keyed!, { n: 5 }, { kind: "fresh" }),
          ],
          "address-occupied",
          "two creates at one address in one batch",
        );
        // Another key is another address.
        await commitOne(
          check,
          storage,
          [createDoc(keyed!, { n: 6 }, { kind: "notes", key: "k" })],
          "create with another key",
        );
      },
    ),
    scenario(
      "refuses two content writes for one document in one batch as double-content",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [d, e] = await mintIds(storage, 2);
        await commitRefused(
          check,
          storage,
          [[createDoc(d!, { n: 1 }), delta(d!, 1, ["s", ["n"], 2])]],
          "double-content",
          0,
          `create and delta of document ${d}`,
        );
        await commitOne(check, storage, [createDoc(e!, { n: 1 })]);
        await refusedAfterOk(
          check,
          storage,
          [delta(e!, 1, ["s", ["n"], 2]), base(e!, 1, { n: 3 })],
          "double-content",
          `delta and base of document ${e}`,
        );
        check.equal(
          (await storage.document(e as DocumentId, "current"))?.value,
          { n: 1 },
          `document ${e} is unchanged`,
        );
      },
    ),
    scenario(
      "refuses a delta whose version differs from the current version as version-crossing; a base may change it",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [d] = await mintIds(storage, 1);
        await commitOne(check, storage, [createDoc(d!, { n: 1 }, {}, 1)]);
        await refusedAfterOk(
          check,
          storage,
          [delta(d!, 2, ["s", ["n"], 2])],
          "version-crossing",
          `delta version 2 on version 1 of document ${d}`,
        );
        await commitOne(
          check,
          storage,
          [base(d!, 2, { m: 1 })],
          "a base changing the version to 2",
        );
        await refusedAfterOk(
          check,
          storage,
          [delta(d!, 1, ["s", ["m"], 2])],
          "version-crossing",
          `delta version 1 on version 2 of document ${d}`,
        );
        await commitOne(check, storage, [delta(d!, 2, ["s", ["m"], 2])], "delta at version 2");
        const read = await storage.document(d as DocumentId, "current");
        check.equal(
          read && { version: read.version, value: read.value },
          { version: 2, value: { m: 2 } },
          `document ${d} current`,
        );
      },
    ),
    scenario(
      "tasks and submissions are replaced whole when their id is written again",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [t, s] = await mintIds(storage, 2);
        await commitOne(check, storage, [
          task(t!, ROOT, { memos: { a: 1 }, startedAt: 5 }),
          submission(s!, ROOT, { requestId: "r", content: "x" }),
        ]);
        const nextTask = task(t!, ROOT, { state: { status: "running", checkpoint: { step: 2 } } });
        const nextSubmission = submission(s!, ROOT, { status: "done" });
        await commitOne(
          check,
          storage,
          [nextTask, nextSubmission],
          "replace the task and the submission",
        );
        check.equal(
          await storage.task(t as TaskId),
          (nextTask as { value: unknown }).value,
          `task ${t} after replacement`,
        );
        check.equal(
          await storage.submission(s as SubmissionId),
          (nextSubmission as { value: unknown }).value,
          `submission ${s} after replacement`,
        );
      },
    ),
  ],
};
