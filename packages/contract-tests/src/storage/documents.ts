import type {
  ConversationId,
  DocumentId,
  MaterializedDocument,
  Seq,
  Storage,
  TaskId,
} from "@durably/core";
import {
  base,
  commitAll,
  commitOne,
  conversation,
  copyDoc,
  createDoc,
  delta,
  mintIds,
  retireDoc,
  rewindable,
  ROOT,
  scenario,
  withRoot,
  type Check,
  type DocOptions,
  type RuleGroup,
} from "./support.js";

function summary(read: MaterializedDocument | undefined) {
  return (
    read && {
      id: read.record.id,
      version: read.version,
      value: read.value,
      deltasSinceBase: read.deltasSinceBase,
    }
  );
}

const read = (storage: Storage, id: number, at: number | "current") =>
  storage.document(id as DocumentId, at as Seq | "current");

/** create {n:0} at s1, delta n=1 at s2, base v2 {n:10} at s3, delta n=11 at s4. */
async function history(
  check: Check,
  storage: Storage,
  options: DocOptions,
): Promise<{ id: number; seqs: number[] }> {
  const [id] = await mintIds(storage, 1);
  const seqs = await commitAll(check, storage, [
    [createDoc(id!, { n: 0 }, options)],
    [delta(id!, 1, ["s", ["n"], 1])],
    [base(id!, 2, { n: 10 })],
    [delta(id!, 2, ["s", ["n"], 11])],
  ]);
  return { id: id!, seqs };
}

const historyUnavailable = { name: "StorageRequestError", reason: "history-unavailable" };

export const documents: RuleGroup = {
  rule: "documents",
  scenarios: [
    scenario(
      "a created document reads back at current with its record, version, value and no deltas",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [d] = await mintIds(storage, 1);
        const seq = await commitOne(check, storage, [
          createDoc(d!, { text: "a" }, { kind: "notes", key: "k" }, 3),
        ]);
        const got = await read(storage, d!, "current");
        check.equal(
          got,
          {
            record: { id: d, kind: "notes", key: "k", scope: { kind: "session" }, createdAt: seq },
            version: 3,
            value: { text: "a" },
            deltasSinceBase: 0,
          },
          `document ${d} created at seq ${seq}`,
        );
      },
    ),
    scenario(
      "document materialises the newest base plus every delta after it, counting deltasSinceBase",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [d] = await mintIds(storage, 1);
        await commitAll(check, storage, [
          [createDoc(d!, { items: [] })],
          [delta(d!, 1, ["p", ["items"], 0, 0, ["a"]])],
          [delta(d!, 1, ["p", ["items"], 1, 0, ["b"]], ["s", ["title"], "t"])],
        ]);
        check.equal(
          summary(await read(storage, d!, "current")),
          { id: d, version: 1, value: { items: ["a", "b"], title: "t" }, deltasSinceBase: 2 },
          `document ${d} after two deltas`,
        );
        await commitAll(check, storage, [
          [base(d!, 2, { items: ["z"] })],
          [delta(d!, 2, ["a", ["items", 0], "!"])],
        ]);
        check.equal(
          summary(await read(storage, d!, "current")),
          { id: d, version: 2, value: { items: ["z!"] }, deltasSinceBase: 1 },
          `document ${d} after a base and a delta`,
        );
      },
    ),
    scenario(
      "current of a retired incarnation is undefined and findDocument at current no longer finds it",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [d] = await mintIds(storage, 1);
        const address = { kind: "notes", scope: { kind: "session" } } as const;
        const created = await commitOne(check, storage, [createDoc(d!, { n: 1 })]);
        const retired = await commitOne(check, storage, [retireDoc(d!)]);
        check.equal(
          {
            document: await read(storage, d!, "current"),
            found: await storage.findDocument(address, "current"),
            foundAtCreation: (await storage.findDocument(address, created as Seq))?.id,
            foundAtRetirement: await storage.findDocument(address, retired as Seq),
          },
          {
            document: undefined,
            found: undefined,
            foundAtCreation: d,
            foundAtRetirement: undefined,
          },
          `document ${d} created at seq ${created}, retired at seq ${retired}`,
        );
      },
    ),
    scenario(
      "a rewindable document reconstructs its value at every seq of its lifetime, also after retirement",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const { id, seqs } = await history(check, storage, rewindable(ROOT));
        const retired = await commitOne(check, storage, [retireDoc(id)]);
        const want = [
          { version: 1, value: { n: 0 }, deltasSinceBase: 0 },
          { version: 1, value: { n: 1 }, deltasSinceBase: 1 },
          { version: 2, value: { n: 10 }, deltasSinceBase: 0 },
          { version: 2, value: { n: 11 }, deltasSinceBase: 1 },
        ];
        for (const [i, seq] of seqs.entries()) {
          const got = await check.resolves(read(storage, id, seq), `document(${id}, ${seq})`);
          check.equal(
            got && { version: got.version, value: got.value, deltasSinceBase: got.deltasSinceBase },
            want[i],
            `rewindable document ${id} at seq ${seq} (retired at ${retired})`,
          );
        }
      },
    ),
    scenario(
      "reads of an incarnation before its creation or from its retirement on are undefined",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [d] = await mintIds(storage, 1);
        const [before, created, retired, after] = await commitAll(check, storage, [
          [],
          [createDoc(d!, { n: 1 }, rewindable(ROOT))],
          [retireDoc(d!)],
          [],
        ]);
        check.equal(
          {
            before: await read(storage, d!, before!),
            retired: await read(storage, d!, retired!),
            after: await read(storage, d!, after!),
          },
          { before: undefined, retired: undefined, after: undefined },
          `document ${d} live from seq ${created} until ${retired}`,
        );
      },
    ),
    scenario(
      "a current-only document rejects reads before its newest base with history-unavailable",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [t] = await mintIds(storage, 1);
        const kinds: [string, DocOptions][] = [
          ["session scope", {}],
          ["task scope", { scope: { kind: "task", taskId: t as TaskId } }],
          [
            "conversation scope without history",
            { kind: "c1", scope: { kind: "conversation", conversationId: ROOT } },
          ],
          [
            "conversation scope with history latest",
            {
              kind: "c2",
              scope: { kind: "conversation", conversationId: ROOT },
              history: "latest",
            },
          ],
        ];
        for (const [what, options] of kinds) {
          const { id, seqs } = await history(check, storage, options);
          for (const seq of seqs.slice(0, 2))
            await check.rejects(
              read(storage, id, seq),
              historyUnavailable,
              `${what} document ${id} at seq ${seq}, before its newest base at seq ${seqs[2]}`,
            );
          check.equal(
            (await read(storage, id, seqs[2]!))?.value,
            { n: 10 },
            `${what} document ${id} at its newest base seq ${seqs[2]}`,
          );
          check.equal(
            (await read(storage, id, seqs[3]!))?.value,
            { n: 11 },
            `${what} document ${id} at seq ${seqs[3]}`,
          );
          check.equal(
            (await read(storage, id, "current"))?.value,
            { n: 11 },
            `${what} document ${id} at current`,
          );
        }
      },
    ),
    scenario(
      "a retired current-only document rejects reads within its lifetime with history-unavailable",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const { id, seqs } = await history(check, storage, {});
        const retired = await commitOne(check, storage, [retireDoc(id)]);
        for (const seq of seqs)
          await check.rejects(
            read(storage, id, seq),
            historyUnavailable,
            `current-only document ${id} at seq ${seq}, retired at ${retired}`,
          );
        check.equal(
          await read(storage, id, retired),
          undefined,
          `document ${id} at its retirement seq ${retired}`,
        );
      },
    ),
    scenario(
      "findDocument finds the incarnation live at a seq, and a new incarnation may take a retired address",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [a, b] = await mintIds(storage, 2);
        const address = {
          kind: "notes",
          scope: { kind: "conversation", conversationId: ROOT },
          key: "k",
        } as const;
        const options: DocOptions = { kind: "notes", scope: address.scope, key: "k" };
        const [s1, s2, s3] = await commitAll(check, storage, [
          [createDoc(a!, { gen: 1 }, options)],
          [retireDoc(a!)],
          [createDoc(b!, { gen: 2 }, options)],
        ]);
        const find = async (at: number | "current") =>
          (await storage.findDocument(address, at as Seq | "current"))?.id;
        check.equal(
          {
            s1: await find(s1!),
            s2: await find(s2!),
            s3: await find(s3!),
            current: await find("current"),
            otherKey: await storage.findDocument({ ...address, key: "x" }, "current"),
          },
          { s1: a, s2: undefined, s3: b, current: b, otherKey: undefined },
          `address incarnations ${a} (seqs ${s1}-${s2}) and ${b} (from ${s3})`,
        );
        check.equal(
          (await read(storage, b!, "current"))?.value,
          { gen: 2 },
          `new incarnation ${b}`,
        );
      },
    ),
    scenario(
      "document.copy at current creates a new incarnation with the source's value and version",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [src, copy] = await mintIds(storage, 2);
        await commitAll(check, storage, [
          [createDoc(src!, { n: 1 }, {}, 4)],
          [delta(src!, 4, ["s", ["n"], 2])],
        ]);
        const seq = await commitOne(check, storage, [
          copyDoc(copy!, src!, "current", { kind: "copied" }),
        ]);
        check.equal(
          summary(await read(storage, copy!, "current")),
          { id: copy, version: 4, value: { n: 2 }, deltasSinceBase: 0 },
          `copy ${copy} of document ${src}`,
        );
        check.equal(
          (await read(storage, copy!, "current"))?.record.createdAt,
          seq,
          `copy ${copy} createdAt`,
        );
        await commitOne(check, storage, [delta(src!, 4, ["s", ["n"], 3])]);
        check.equal(
          (await read(storage, copy!, "current"))?.value,
          { n: 2 },
          `copy ${copy} after its source changed`,
        );
      },
    ),
    scenario(
      "document.copy at a historical seq copies the source's value at that seq",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const { id, seqs } = await history(check, storage, rewindable(ROOT));
        const [copy] = await mintIds(storage, 1);
        await commitOne(check, storage, [copyDoc(copy!, id, seqs[1]!, { kind: "copied" })]);
        check.equal(
          summary(await read(storage, copy!, "current")),
          { id: copy, version: 1, value: { n: 1 }, deltasSinceBase: 0 },
          `copy ${copy} of document ${id} at seq ${seqs[1]}`,
        );
      },
    ),
    scenario(
      "document.copy at current sees the writes made earlier in the same call",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [src, c1, c2] = await mintIds(storage, 3);
        await commitAll(check, storage, [
          [createDoc(src!, { n: 1 })],
          [delta(src!, 1, ["s", ["n"], 2]), copyDoc(c1!, src!, "current", { kind: "c1" })],
          [copyDoc(c2!, src!, "current", { kind: "c2" })],
        ]);
        check.equal(
          {
            inBatch: (await read(storage, c1!, "current"))?.value,
            nextBatch: (await read(storage, c2!, "current"))?.value,
          },
          { inBatch: { n: 2 }, nextBatch: { n: 2 } },
          `copies ${c1} (same batch as the change) and ${c2} (next batch of the call) of document ${src}`,
        );
      },
    ),
    scenario(
      "content applies before retirement within a batch, whatever the write order",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [d] = await mintIds(storage, 1);
        const created = await commitOne(check, storage, [
          createDoc(d!, { n: 1 }, rewindable(ROOT)),
        ]);
        const retired = await commitOne(
          check,
          storage,
          [retireDoc(d!), delta(d!, 1, ["s", ["n"], 2])],
          "retire then change in one batch",
        );
        check.equal(
          {
            current: await read(storage, d!, "current"),
            beforeRetirement: (await read(storage, d!, created))?.value,
          },
          { current: undefined, beforeRetirement: { n: 1 } },
          `document ${d} retired at seq ${retired} in the batch that changed it`,
        );
      },
    ),
    scenario(
      "documents in different scopes or under different keys are different addresses",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [c, t, a, b, x, y] = await mintIds(storage, 6);
        await commitOne(check, storage, [
          conversation(c!),
          createDoc(a!, "session", { kind: "k" }),
          createDoc(b!, "conversation", {
            kind: "k",
            scope: { kind: "conversation", conversationId: c as ConversationId },
          }),
          createDoc(x!, "task", { kind: "k", scope: { kind: "task", taskId: t as TaskId } }),
          createDoc(y!, "keyed", { kind: "k", key: "" }),
        ]);
        const find = async (scope: object, key?: string) =>
          (
            await storage.findDocument(
              { kind: "k", scope: scope as never, ...(key === undefined ? {} : { key }) },
              "current",
            )
          )?.id;
        check.equal(
          {
            session: await find({ kind: "session" }),
            conversation: await find({ kind: "conversation", conversationId: c }),
            task: await find({ kind: "task", taskId: t }),
            emptyKey: await find({ kind: "session" }, ""),
          },
          { session: a, conversation: b, task: x, emptyKey: y },
          "one incarnation per (kind, scope, key)",
        );
      },
    ),
  ],
};
