import { describe, expect, it } from "vitest";
import {
  defineDoc,
  ROOT_CONVERSATION_ID as ROOT,
  type ConversationId,
  type Cursor,
  type EntryRecord,
  type Transaction,
} from "../../src/index.js";
import { Echo, Notes, openTest } from "../support/session.js";

const Current = defineDoc<{ v: number }>({
  kind: "test.current",
  version: 1,
  scope: "conversation",
  fork: "current",
  initial: () => ({ v: 0 }),
});
const AsOf = defineDoc<{ v: number }>({
  kind: "test.asof",
  version: 1,
  scope: "conversation",
  history: "rewindable",
  fork: "asOf",
  initial: () => ({ v: 0 }),
});

async function all(
  tx: Transaction,
  conversationId: ConversationId,
  limit: number,
  order?: "ascending" | "descending",
) {
  const out: EntryRecord[] = [];
  let cursor: Cursor | undefined;
  do {
    const page = await tx.scanEntries(
      { conversationId, ...(order ? { order } : {}) },
      limit,
      cursor,
    );
    expect(page.items.length).toBeLessThanOrEqual(limit);
    out.push(...page.items);
    cursor = page.next;
  } while (cursor);
  return out.map((e) => e.data);
}

describe("session > forks", () => {
  it("a child sees the parent's entries through at; documents follow their fork policy", async () => {
    const { session } = await openTest();
    const at = await session.commit(async (tx) => {
      (await tx.doc(Current, ROOT)).v = 1;
      (await tx.doc(AsOf, ROOT)).v = 1;
      (await tx.doc(Notes, ROOT)).text = "parent";
      await tx.appendEntry(ROOT, { kind: "m", data: 1 });
      return tx.appendEntry(ROOT, { kind: "m", data: 2 });
    });
    await session.commit(async (tx) => {
      (await tx.doc(Current, ROOT)).v = 2;
      (await tx.doc(AsOf, ROOT)).v = 2;
      await tx.appendEntry(ROOT, { kind: "m", data: 3 });
    });
    const child = await session.commit((tx) =>
      tx.forkConversation(ROOT, at.id, { ownership: { kind: "ownerless" } }),
    );
    expect(child.parent).toEqual({ conversationId: ROOT, at: at.id });
    await session.commit((tx) => tx.appendEntry(child.id, { kind: "m", data: 4 }));
    expect(await session.commit((tx) => all(tx, child.id, 10))).toEqual([4, 2, 1]);
    expect(await session.snapshot(Current, child.id)).toEqual({ v: 2 });
    expect(await session.snapshot(AsOf, child.id)).toEqual({ v: 1 });
    expect(await session.snapshot(Notes, child.id)).toBeUndefined(); // "initial": fresh on first access
    await session.commit(async (tx) => void ((await tx.doc(Current, child.id)).v = 9));
    expect(await session.snapshot(Current, ROOT)).toEqual({ v: 2 }); // independent incarnations
    await session.close();
  });

  it("a fork point in a prepared-but-unstored commit waits for its seq", async () => {
    const { session, storage } = await openTest();
    storage.commitDelayMs = 5;
    await session.commit(async (tx) => void ((await tx.doc(AsOf, ROOT)).v = 1));
    const at = session.commit((tx) => tx.appendEntry(ROOT, { kind: "at" }));
    const later = session.commit(async (tx) => void ((await tx.doc(AsOf, ROOT)).v = 2));
    const child = session.commit(async (tx) =>
      tx.forkConversation(ROOT, (await tx.scanEntries({ conversationId: ROOT }, 1)).items[0]!.id, {
        ownership: { kind: "ownerless" },
      }),
    );
    await Promise.all([at, later]);
    expect(await session.snapshot(AsOf, (await child).id)).toEqual({ v: 1 });
    await session.close();
  });
});

describe("session > scans over prepared commits", () => {
  it("merge stored and prepared entries in order, with cursors, in both directions", async () => {
    const { session, storage } = await openTest();
    for (let i = 0; i < 5; i++)
      await session.commit((tx) => tx.appendEntry(ROOT, { kind: "m", data: i }));
    storage.commitDelayMs = 15;
    const pending = Array.from({ length: 4 }, (_, i) =>
      session.commit((tx) => tx.appendEntry(ROOT, { kind: "m", data: 5 + i })),
    );
    const [desc, asc] = await session.commit(async (tx) => [
      await all(tx, ROOT, 2),
      await all(tx, ROOT, 3, "ascending"),
    ]);
    await Promise.all(pending);
    expect(desc).toEqual([8, 7, 6, 5, 4, 3, 2, 1, 0]);
    expect(asc).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    await session.close();
  });

  it("a prepared task replacement hides the stored copy and filters by its new state", async () => {
    const { session, storage } = await openTest();
    const ids = await session.commit(async (tx) => {
      const out = [];
      for (let i = 0; i < 3; i++)
        out.push(
          await tx.createTask(Echo, i, { ownership: { kind: "ownerless" }, conversationId: ROOT }),
        );
      return out;
    });
    storage.commitDelayMs = 15;
    const running = session.commit(async (tx) => {
      const t = (await tx.task(ids[1]!))!;
      return tx.putTask({
        ...t,
        state: {
          status: "running",
          checkpoint: t.state.status === "pending" ? t.state.checkpoint : null,
        },
      });
    });
    const seen = await session.commit(async (tx) => {
      const pendingTasks = await tx.scanTasks({ status: "pending" }, 1);
      const second = pendingTasks.next
        ? await tx.scanTasks({ status: "pending" }, 1, pendingTasks.next)
        : { items: [] };
      const runningTasks = await tx.scanTasks({ status: "running" }, 10);
      return {
        pending: [...pendingTasks.items, ...second.items].map((t) => t.id),
        more: second.next !== undefined,
        running: runningTasks.items.map((t) => t.id),
      };
    });
    await running;
    expect(seen).toEqual({ pending: [ids[0], ids[2]], more: false, running: [ids[1]] });
    await session.close();
  });
});
