import { describe, expect, it } from "vitest";
import {
  isSealedBatches,
  ROOT_CONVERSATION_ID as ROOT,
  Session,
  type Batch,
  type CommitResult,
  type Seq,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";
import { Echo, Notes } from "../support/session.js";

/** Paths of arrays and objects under `value` that are not frozen. */
function unfrozen(value: unknown, path: string): string[] {
  if (typeof value !== "object" || value === null) return [];
  const own = Object.isFrozen(value) ? [] : [path];
  const inner = Array.isArray(value)
    ? value.flatMap((item, i) => unfrozen(item, `${path}[${i}]`))
    : Object.entries(value).flatMap(([k, item]) => unfrozen(item, `${path}.${k}`));
  return [...own, ...inner];
}

/** The values a write carries (not the write objects around them). */
function valuesOf(write: Batch[number]): [string, unknown][] {
  switch (write.type) {
    case "conversation":
    case "entry":
    case "task":
    case "submission":
      return [[`${write.type}.value`, write.value]];
    case "document.create":
      return [
        ["document.create.record", write.record],
        ["document.create.content", write.content.value],
      ];
    case "document.copy":
      return [["document.copy.record", write.record]];
    case "document.change":
      return [
        [
          "document.change.content",
          write.content.kind === "base" ? write.content.value : write.content.ops,
        ],
      ];
    case "document.retire":
      return [];
  }
}

/** Records, for each commit call, what the synchronous part saw and what it saw after an await. */
class InspectingStorage extends MemoryStorage {
  readonly seen: { sealed: boolean; copySealed: boolean; unfrozen: string[]; types: string[] }[] =
    [];
  readonly afterAwait: boolean[] = [];

  override commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
  ): Promise<CommitResult> {
    const writes = batches.flat();
    this.seen.push({
      sealed: isSealedBatches(batches),
      copySealed: isSealedBatches([...batches]) || batches.some((b) => isSealedBatches(b)),
      unfrozen: writes.flatMap((w) => valuesOf(w).flatMap(([path, v]) => unfrozen(v, path))),
      types: writes.map((w) => w.type),
    });
    const result = super.commit(batches, receive);
    void Promise.resolve().then(() => this.afterAwait.push(isSealedBatches(batches)));
    return result;
  }
}

describe("session > sealed batches", () => {
  it("are recognised while storage.commit's synchronous part runs, with every value frozen", async () => {
    const storage = new InspectingStorage();
    const session = await Session.open(storage);
    const conversation = await session.commit(async (tx) => {
      const created = await tx.createConversation({ ownership: { kind: "ownerless" } });
      (await tx.doc(Notes, created.id)).items.push(1);
      await tx.appendEntry(created.id, { kind: "note", data: { text: "hi", at: [1, 2] } });
      await tx.createSubmission(created.id, { type: "input", content: { ask: ["x"] } });
      await tx.createTask(
        Echo,
        { n: { deep: [1] } },
        { ownership: { kind: "ownerless" }, conversationId: created.id },
      );
      return created.id;
    });
    await session.commit(async (tx) => {
      const notes = await tx.doc(Notes, conversation);
      notes.text = "changed";
      notes.items.push(2, { nested: true } as never);
    });
    await session.commit(
      async (tx) => {
        (await tx.doc(Notes, ROOT)).text += "progress";
      },
      { durability: "deferred" },
    );
    await session.close(); // stores the deferred progress (coalesced)

    const types = storage.seen.flatMap((s) => s.types);
    for (const type of [
      "conversation",
      "entry",
      "task",
      "submission",
      "document.create",
      "document.change",
    ])
      expect(types, type).toContain(type);
    for (const [i, call] of storage.seen.entries()) {
      expect(call.sealed, `call ${i}`).toBe(true);
      expect(call.copySealed, `call ${i}`).toBe(false);
      expect(call.unfrozen, `call ${i}`).toEqual([]);
    }
    expect(storage.afterAwait).toEqual(storage.seen.map(() => false));
  });

  it("are never batches a caller builds itself", async () => {
    const storage = new InspectingStorage();
    const batches: Batch[] = [[{ type: "conversation", value: { id: 1 as never } }]];
    await storage.commit(batches, () => undefined);
    expect(storage.seen).toEqual([
      {
        sealed: false,
        copySealed: false,
        unfrozen: ["conversation.value"],
        types: ["conversation"],
      },
    ]);
    expect(isSealedBatches(batches)).toBe(false);
    expect(isSealedBatches(undefined)).toBe(false);
  });
});
