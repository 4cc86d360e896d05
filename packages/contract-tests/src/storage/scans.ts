import type { ConversationId, Cursor, Order, Page, Storage, TaskId } from "@durably/core";
import {
  ascending,
  commitOne,
  conversation,
  createDoc,
  descending,
  entry,
  idsOf,
  mintIds,
  retireDoc,
  ROOT,
  scanAll,
  scenario,
  show,
  submission,
  task,
  withRoot,
  type Check,
  type RuleGroup,
} from "./support.js";

type ScanName =
  "scanConversations" | "scanEntries" | "scanTasks" | "scanSubmissions" | "scanDocuments";
type AnyScan = (query: object, limit: number, cursor?: Cursor) => Promise<Page<{ id: number }>>;

function scanOf(storage: Storage, name: ScanName): AnyScan {
  return (storage[name] as unknown as AnyScan).bind(storage);
}

/** One query per scan over a store with several matching items of each kind. */
const QUERIES: Record<ScanName, object> = {
  scanConversations: {},
  scanEntries: { conversationId: ROOT },
  scanTasks: {},
  scanSubmissions: { conversationId: ROOT },
  scanDocuments: { scope: { kind: "session" }, at: "current" },
};

/** Stores five of each kind (conversations: root plus four); returns the ids by scan. */
async function fill(check: Check, storage: Storage): Promise<Record<ScanName, number[]>> {
  await withRoot(check, storage);
  const minted = await mintIds(storage, 25);
  const slice = (i: number) => minted.slice(i * 5, i * 5 + 5);
  const [conversations, entries, tasks, submissions, docs] = [
    slice(0).slice(0, 4),
    slice(1),
    slice(2),
    slice(3),
    slice(4),
  ];
  await commitOne(check, storage, [
    ...conversations.map((id) => conversation(id)),
    ...entries.map((id) => entry(id, ROOT)),
    ...tasks.map((id) => task(id, ROOT)),
    ...submissions.map((id) => submission(id, ROOT)),
    ...docs.map((id, i) => createDoc(id, { i }, { kind: `k${i}` })),
  ]);
  return {
    scanConversations: [ROOT, ...conversations],
    scanEntries: entries,
    scanTasks: tasks,
    scanSubmissions: submissions,
    scanDocuments: docs,
  };
}

const SCANS = Object.keys(QUERIES) as ScanName[];

export const scans: RuleGroup = {
  rule: "scans",
  scenarios: [
    scenario(
      "every scan orders by id: entries newest first by default, everything else ascending, both orders honoured",
      async ({ storage, check }) => {
        const expected = await fill(check, storage);
        for (const name of SCANS) {
          const scan = scanOf(storage, name);
          const defaultOrder =
            name === "scanEntries" ? descending(expected[name]) : ascending(expected[name]);
          check.equal(
            idsOf((await scan(QUERIES[name], 100)).items),
            defaultOrder,
            `${name}(${show(QUERIES[name])}) default order`,
          );
          for (const order of ["ascending", "descending"] as Order[]) {
            const want =
              order === "ascending" ? ascending(expected[name]) : descending(expected[name]);
            check.equal(
              idsOf((await scan({ ...QUERIES[name], order }, 100)).items),
              want,
              `${name} order ${order}`,
            );
          }
        }
      },
    ),
    scenario(
      "following next with any limit yields every matching item exactly once, in order, for every scan",
      async ({ storage, check }) => {
        const expected = await fill(check, storage);
        for (const name of SCANS)
          for (const order of ["ascending", "descending"] as Order[])
            for (const limit of [1, 2, 3, 5, 6]) {
              const query = { ...QUERIES[name], order };
              const items = await scanAll(
                check,
                `${name}(${show(query)}, limit ${limit})`,
                limit,
                (cursor) => scanOf(storage, name)(query, limit, cursor),
              );
              const want =
                order === "ascending" ? ascending(expected[name]) : descending(expected[name]);
              check.equal(idsOf(items), want, `${name}(${show(query)}) paged with limit ${limit}`);
            }
      },
    ),
    scenario(
      "next is present iff more items follow, also when the last page is exactly full",
      async ({ storage, check }) => {
        const expected = await fill(check, storage);
        for (const name of SCANS) {
          const scan = scanOf(storage, name);
          const count = expected[name].length;
          const whole = await scan(QUERIES[name], count);
          check.equal(
            { items: whole.items.length, next: whole.next !== undefined },
            { items: count, next: false },
            `${name} with limit ${count} = number of items`,
          );
          const first = await scan(QUERIES[name], count - 1);
          check.equal(
            { items: first.items.length, next: first.next !== undefined },
            { items: count - 1, next: true },
            `${name} with limit ${count - 1}`,
          );
          const rest = await scan(QUERIES[name], count - 1, first.next);
          check.equal(
            { items: rest.items.length, next: rest.next !== undefined },
            { items: 1, next: false },
            `${name} second page with limit ${count - 1}`,
          );
        }
      },
    ),
    scenario(
      "a limit that is not a positive integer rejects with StorageRequestError bad-limit",
      async ({ storage, check }) => {
        await fill(check, storage);
        for (const name of SCANS)
          for (const limit of [
            0,
            -1,
            1.5,
            Number.NaN,
            Number.POSITIVE_INFINITY,
            "2" as unknown as number,
          ])
            await check.rejects(
              scanOf(storage, name)(QUERIES[name], limit),
              { name: "StorageRequestError", reason: "bad-limit" },
              `${name} with limit ${show(limit)}`,
            );
      },
    ),
    scenario(
      "an unknown query field or order rejects with StorageRequestError bad-query",
      async ({ storage, check }) => {
        await fill(check, storage);
        for (const name of SCANS) {
          await check.rejects(
            scanOf(storage, name)({ ...QUERIES[name], colour: "red" }, 10),
            { name: "StorageRequestError", reason: "bad-query" },
            `${name} with unknown field colour`,
          );
          await check.rejects(
            scanOf(storage, name)({ ...QUERIES[name], order: "sideways" }, 10),
            { name: "StorageRequestError", reason: "bad-query" },
            `${name} with order "sideways"`,
          );
        }
      },
    ),
    scenario(
      "a cursor of another query, another scan or garbage rejects with StorageRequestError bad-cursor",
      async ({ storage, check }) => {
        const expected = await fill(check, storage);
        const entriesCursor = (await storage.scanEntries({ conversationId: ROOT }, 1))
          .next as Cursor;
        const tasksCursor = (await storage.scanTasks({}, 1)).next as Cursor;
        const other = expected.scanConversations[1] as ConversationId;
        const badCursor = { name: "StorageRequestError", reason: "bad-cursor" };
        await check.rejects(
          storage.scanEntries({ conversationId: other }, 1, entriesCursor),
          badCursor,
          `scanEntries of conversation ${other} with a cursor of conversation ${ROOT}`,
        );
        await check.rejects(
          storage.scanEntries({ conversationId: ROOT, order: "ascending" }, 1, entriesCursor),
          badCursor,
          "scanEntries ascending with a descending cursor",
        );
        await check.rejects(
          storage.scanTasks({ kind: "job" }, 1, tasksCursor),
          badCursor,
          "scanTasks({kind}) with a cursor of scanTasks({})",
        );
        await check.rejects(
          storage.scanConversations({}, 1, tasksCursor),
          badCursor,
          "scanConversations with a scanTasks cursor",
        );
        for (const garbage of [
          {},
          { p: 3 },
          { v: 99, q: "x", p: 1 },
          "cursor" as unknown as Cursor,
          [] as unknown as Cursor,
        ])
          for (const name of SCANS)
            await check.rejects(
              scanOf(storage, name)(QUERIES[name], 1, garbage),
              badCursor,
              `${name} with garbage cursor ${show(garbage)}`,
            );
      },
    ),
    scenario("scanConversations filters by ownerTaskId", async ({ storage, check }) => {
      await withRoot(check, storage);
      const [t1, t2, a, b, c] = await mintIds(storage, 5);
      const owned = (taskId: number) => ({
        owner: { conversationId: ROOT, taskId: taskId as TaskId },
      });
      await commitOne(check, storage, [
        conversation(a!, owned(t1!)),
        conversation(b!, owned(t2!)),
        conversation(c!, owned(t1!)),
      ]);
      check.equal(
        idsOf((await storage.scanConversations({ ownerTaskId: t1 as TaskId }, 10)).items),
        [a, c],
        `conversations owned by task ${t1}`,
      );
      check.equal(
        idsOf(
          (await storage.scanConversations({ ownerTaskId: t2 as TaskId, order: "descending" }, 10))
            .items,
        ),
        [b],
        `conversations owned by task ${t2}`,
      );
    }),
    scenario(
      "scanTasks filters by equality on conversationId, kind, status, abortRequested, background and owner",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [c, t1, t2, t3, t4] = await mintIds(storage, 5);
        await commitOne(check, storage, [
          conversation(c!),
          task(t1!, ROOT, { kind: "a" }),
          task(t2!, c!, {
            kind: "b",
            background: true,
            owner: t1 as TaskId,
            state: { status: "running", checkpoint: 1 },
          }),
          task(t3!, ROOT, {
            kind: "a",
            abortRequested: true,
            owner: t1 as TaskId,
            state: { status: "terminal", outcome: { kind: "completed" } },
          }),
          task(t4!, c!, {
            kind: "a",
            state: { status: "waiting", checkpoint: null, on: [t2 as TaskId], policy: "failFast" },
          }),
        ]);
        const cases: [object, (number | undefined)[]][] = [
          [{ conversationId: c }, [t2, t4]],
          [{ kind: "a" }, [t1, t3, t4]],
          [{ status: "running" }, [t2]],
          [{ status: "waiting" }, [t4]],
          [{ status: "pending" }, [t1]],
          [{ abortRequested: true }, [t3]],
          [{ background: true }, [t2]],
          [{ background: false, kind: "a" }, [t1, t3, t4]],
          [{ owner: t1 }, [t2, t3]],
          [{ conversationId: c, kind: "a", order: "descending" }, [t4]],
          [{ conversationId: ROOT, status: "terminal", abortRequested: true }, [t3]],
        ];
        for (const [query, want] of cases)
          check.equal(
            idsOf((await storage.scanTasks(query, 10)).items),
            want,
            `scanTasks(${show(query)})`,
          );
      },
    ),
    scenario(
      "scanSubmissions returns one conversation's submissions, filtered by status",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [c, s1, s2, s3] = await mintIds(storage, 4);
        await commitOne(check, storage, [
          conversation(c!),
          submission(s1!, ROOT),
          submission(s2!, c!),
          submission(s3!, ROOT, { status: "done" }),
        ]);
        check.equal(
          idsOf((await storage.scanSubmissions({ conversationId: ROOT }, 10)).items),
          [s1, s3],
          `submissions of conversation ${ROOT}`,
        );
        check.equal(
          idsOf(
            (await storage.scanSubmissions({ conversationId: ROOT, status: "done" }, 10)).items,
          ),
          [s3],
          `done submissions of ${ROOT}`,
        );
        check.equal(
          idsOf(
            (
              await storage.scanSubmissions(
                { conversationId: c as ConversationId, status: "done" },
                10,
              )
            ).items,
          ),
          [],
          `done submissions of ${c}`,
        );
      },
    ),
    scenario(
      "scanDocuments lists the scope's incarnations live at the given seq, filtered by kind",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [c, a, b, x, y] = await mintIds(storage, 5);
        const convScope = { kind: "conversation", conversationId: c as ConversationId } as const;
        const s1 = await commitOne(check, storage, [
          conversation(c!),
          createDoc(a!, 1, { kind: "k" }),
          createDoc(b!, 2, { kind: "k", key: "2" }),
          createDoc(x!, 3, { scope: convScope }),
        ]);
        const s2 = await commitOne(check, storage, [
          retireDoc(a!),
          createDoc(y!, 4, { kind: "other" }),
        ]);
        const session = { kind: "session" } as const;
        const cases: [object, (number | undefined)[]][] = [
          [{ scope: session, at: s1 }, [a, b]],
          [{ scope: session, at: s2 }, [b, y]],
          [{ scope: session, at: "current" }, [b, y]],
          [{ scope: session, at: "current", kind: "k" }, [b]],
          [{ scope: session, at: s1, kind: "other" }, []],
          [{ scope: convScope, at: "current" }, [x]],
          [{ scope: { kind: "task", taskId: c }, at: "current" }, []],
        ];
        for (const [query, want] of cases)
          check.equal(
            idsOf((await storage.scanDocuments(query as never, 10)).items),
            want,
            `scanDocuments(${show(query)}), a retired at seq ${s2}`,
          );
      },
    ),
  ],
};
