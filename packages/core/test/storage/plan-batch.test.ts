import { describe, expect, it } from "vitest";
import type {
  ConversationId,
  DocumentId,
  EntryId,
  NewDocumentRecord,
  Seq,
  TaskId,
} from "../../src/index.js";
import {
  collectNeeds,
  indexPlanView,
  isProblem,
  KnownDocuments,
  materializeRevisions,
  MemoryIndex,
  planBatch,
  type Batch,
  type BatchPlan,
  type BatchProblem,
  type StorageWrite,
  type StoredRevision,
} from "../../src/storage/index.js";

/*
 * The refusal engine against a real in-memory index: the state is built by
 * planning and applying batches, then each rule is broken once.
 */

type Index = MemoryIndex<StoredRevision>;

function view(index: Index) {
  return indexPlanView(index, (id, at) => {
    const doc = index.documents.get(id);
    if (doc === undefined) throw new Error(`no document ${id}`);
    const upTo = doc.revisions.filter((r) => r.seq <= at);
    let start = upTo.length - 1;
    while (start > 0 && upTo[start]?.content.kind !== "base") start--;
    return materializeRevisions(id, upTo.slice(Math.max(start, 0)));
  });
}

function plan(index: Index, batch: Batch): BatchPlan | BatchProblem {
  return planBatch(batch, view(index), index.lastSeq + 1);
}

/** Plans and applies `batch`, which must pass. */
function store(index: Index, batch: Batch): BatchPlan {
  const result = plan(index, batch);
  if (isProblem(result)) throw new Error(`refused: ${result.message}`);
  index.apply(result, (write, seq) => ({ seq, content: write.content }));
  return result;
}

function refusal(index: Index, batch: Batch): BatchProblem {
  const result = plan(index, batch);
  if (!isProblem(result)) throw new Error("expected a refusal, got a plan");
  return result;
}

const conv = (id: number, extra: object = {}): StorageWrite => ({
  type: "conversation",
  value: { id: id as ConversationId, ...extra },
});
const entry = (id: number, conversationId: number, extra: object = {}): StorageWrite => ({
  type: "entry",
  value: {
    id: id as EntryId,
    conversationId: conversationId as ConversationId,
    kind: "note",
    ...extra,
  },
});
const notes = (id: number, extra: Partial<NewDocumentRecord> = {}): NewDocumentRecord => ({
  id: id as DocumentId,
  kind: "notes",
  scope: { kind: "conversation", conversationId: 1 as ConversationId },
  ...extra,
});
const create = (
  id: number,
  value: object,
  extra: Partial<NewDocumentRecord> = {},
): StorageWrite => ({
  type: "document.create",
  record: notes(id, extra),
  content: { kind: "base", version: 1, value: value as never },
});
const delta = (id: number, version: number, ops: unknown[]): StorageWrite => ({
  type: "document.change",
  id: id as DocumentId,
  content: { kind: "delta", version, ops: ops as never },
});
const retire = (id: number): StorageWrite => ({ type: "document.retire", id: id as DocumentId });
const copy = (
  id: number,
  source: number,
  at: number | "current",
  kind = "copied",
): StorageWrite => ({
  type: "document.copy",
  record: notes(id, { kind }),
  source: { id: source as DocumentId, at: at as Seq | "current" },
});

function seeded(): Index {
  const index: Index = new MemoryIndex();
  store(index, [conv(1), conv(2), entry(3, 1), create(4, { n: 1 })]);
  return index;
}

describe("planBatch refuses, with one reason and message per rule", () => {
  it("refuses a conversation or entry id that is already stored", () => {
    const index = seeded();
    expect(refusal(index, [conv(2)])).toEqual({
      writeIndex: 0,
      reason: "immutable-record",
      message: "conversation 2 is already stored",
    });
    expect(refusal(index, [conv(9), entry(3, 1)])).toMatchObject({
      writeIndex: 1,
      reason: "immutable-record",
      message: "entry 3 is already stored",
    });
  });

  it("refuses records naming a conversation that is neither stored nor written before them", () => {
    const index = seeded();
    expect(refusal(index, [conv(9, { parent: { conversationId: 7, at: 3 } })]).message).toBe(
      "conversation 9 forks from unknown conversation 7",
    );
    expect(refusal(index, [entry(9, 7)]).message).toBe("entry 9 names unknown conversation 7");
    const task = {
      type: "task",
      value: {
        id: 9 as TaskId,
        conversationId: 7 as ConversationId,
        kind: "t",
        version: 1,
        input: null,
        background: false,
        abortRequested: false,
        state: { status: "pending", checkpoint: null },
      },
    } as StorageWrite;
    expect(refusal(index, [task])).toMatchObject({
      reason: "unknown-conversation",
      message: "task 9 names unknown conversation 7",
    });
    expect(isProblem(plan(index, [conv(7), task]))).toBe(false);
  });

  it("refuses a second incarnation with an existing id, or at a live address", () => {
    const index = seeded();
    expect(refusal(index, [create(4, {}, { kind: "other" })])).toMatchObject({
      reason: "duplicate-id",
      message: "document 4 already exists",
    });
    expect(refusal(index, [create(9, {})])).toMatchObject({
      reason: "address-occupied",
      message: 'document 9: address (kind "notes", scope c:1, no key) already has live document 4',
    });
    expect(
      refusal(index, [create(9, {}, { kind: "x" }), create(10, {}, { kind: "x" })]),
    ).toMatchObject({
      writeIndex: 1,
      reason: "address-occupied",
      message: 'document 10: address (kind "x", scope c:1, no key) already has live document 9',
    });
  });

  it("lets a batch reuse an address whose incarnation an earlier batch retired", () => {
    const index = seeded();
    store(index, [retire(4)]);
    expect(isProblem(plan(index, [create(9, {})]))).toBe(false);
  });

  it("refuses changes and retirements of unknown or retired documents, and a retirement twice", () => {
    const index = seeded();
    expect(refusal(index, [delta(8, 1, [])])).toMatchObject({
      reason: "unknown-document",
      message: "document 8 does not exist",
    });
    expect(refusal(index, [retire(8)]).reason).toBe("unknown-document");
    expect(refusal(index, [retire(4), retire(4)])).toMatchObject({
      writeIndex: 1,
      reason: "retired-document",
      message: "document 4 is retired twice in one batch",
    });
    const retiredAt = store(index, [retire(4)]).seq;
    expect(refusal(index, [delta(4, 1, [])])).toMatchObject({
      reason: "retired-document",
      message: `document 4 was retired at seq ${retiredAt}`,
    });
  });

  it("refuses a delta across a version and a delta that does not apply", () => {
    const index = seeded();
    expect(refusal(index, [delta(4, 2, [["s", ["n"], 2]])])).toMatchObject({
      reason: "version-crossing",
      message: "document 4: a delta for version 2 on version 1 (a version change needs a base)",
    });
    const bad = refusal(index, [delta(4, 1, [["s", ["missing", "deep"], 2]])]);
    expect(bad.reason).toBe("invalid-write");
    expect(bad.message).toMatch(/^document 4 delta does not apply to its current value: /);
  });

  it("refuses copies of a missing, not yet stored, not live or no longer kept source", () => {
    const index = seeded();
    expect(refusal(index, [copy(9, 8, "current")]).message).toBe(
      "document 9 copy: source document 8 does not exist",
    );
    expect(refusal(index, [copy(9, 4, 5)]).message).toBe(
      "document 9 copy: source seq 5 is not committed yet (newest committed seq is 1)",
    );
    store(index, [
      {
        type: "document.change",
        id: 4 as DocumentId,
        content: { kind: "base", version: 1, value: { n: 5 } },
      },
    ]);
    expect(refusal(index, [copy(9, 4, 1)])).toMatchObject({
      reason: "unknown-document",
      message:
        "document 9 copy: source document 4 at seq 1: document 4 keeps only its current value: seq 1 is before its newest base at seq 2",
    });
    store(index, [retire(4)]);
    expect(refusal(index, [copy(9, 4, "current")]).message).toBe(
      "document 9 copy: source document 4 is not live at current",
    );
    expect(refusal(index, [copy(9, 4, 2)]).message).toMatch(
      /was retired at seq 3: seq 2 is no longer readable$/,
    );
  });
});

describe("planBatch plans what to store", () => {
  it("stamps createdAt, drops a retiredAt the caller sent and orders retirements after content", () => {
    const index = seeded();
    const result = plan(index, [
      retire(4),
      {
        type: "document.create",
        record: { ...notes(9, { kind: "k" }), retiredAt: 3 } as NewDocumentRecord,
        content: { kind: "base", version: 1, value: { a: 1 } },
      },
      delta(4, 1, [["s", ["n"], 2]]),
    ]);
    if (isProblem(result)) throw new Error(result.message);
    expect(result.writes.map((w) => `${w.type}@${w.index}`)).toEqual([
      "document.create@1",
      "document.change@2",
      "document.retire@0",
    ]);
    expect(result.writes[0]).toMatchObject({ record: { id: 9, createdAt: 2 }, currentOnly: true });
    expect(result.writes[0]).not.toHaveProperty("record.retiredAt");
    // The retired document's change still applies: content comes before retirement.
    expect(result.writes[1]).toMatchObject({
      id: 4,
      after: { version: 1, value: { n: 2 }, deltasSinceBase: 1 },
    });
  });

  it("copies at current see the writes before them, and copies at a seq read that seq", () => {
    const index = seeded();
    store(index, [delta(4, 1, [["s", ["n"], 2]])]);
    const result = plan(index, [
      delta(4, 1, [["s", ["n"], 3]]),
      copy(9, 4, "current"),
      copy(10, 4, 1, "old"),
    ]);
    if (isProblem(result)) throw new Error(result.message);
    expect(result.writes[1]).toMatchObject({
      content: { value: { n: 3 } },
      copiedFrom: { id: 4, at: "current" },
    });
    expect(result.writes[2]).toMatchObject({
      content: { value: { n: 1 } },
      copiedFrom: { id: 4, at: 1 },
    });
  });

  it("names what a call will ask, for backends that fetch state first", () => {
    const needs = collectNeeds([
      [conv(9, { parent: { conversationId: 1, at: 3 } }), entry(10, 9)],
      [copy(11, 4, 2), delta(4, 1, []), retire(5)],
    ]);
    expect([...needs.conversations].sort()).toEqual([1, 9]);
    expect([...needs.newConversations]).toEqual([9]);
    expect([...needs.newEntries]).toEqual([10]);
    expect([...needs.newDocuments]).toEqual([11]);
    expect([...needs.documents].sort()).toEqual([4, 5]);
    expect([...needs.values]).toEqual([4]);
    expect(needs.history).toEqual([{ id: 4, at: 2 }]);
    expect(needs.addresses).toEqual([
      { kind: "copied", scope: { kind: "conversation", conversationId: 1 } },
    ]);
  });
});

describe("KnownDocuments remembers what stored plans made true", () => {
  it("keeps a created document's base, each delta's value, a new base's seq, and forgets a retired one", () => {
    const index: Index = new MemoryIndex();
    const known = new KnownDocuments();
    const none = () => undefined;
    known.adopt(store(index, [conv(1), create(4, { n: 1 })]), none);
    expect(known.get(4)).toEqual({
      createdAt: 1,
      retiredAt: undefined,
      currentOnly: true,
      newestBaseSeq: 1,
      current: { version: 1, value: { n: 1 }, deltasSinceBase: 0 },
      lastSeq: 1,
    });
    known.adopt(store(index, [delta(4, 1, [["s", ["n"], 2]])]), none);
    expect(known.get(4)).toMatchObject({
      newestBaseSeq: 1,
      current: { version: 1, value: { n: 2 }, deltasSinceBase: 1 },
      lastSeq: 2,
    });
    const rebased = store(index, [
      {
        type: "document.change",
        id: 4 as DocumentId,
        content: { kind: "base", version: 2, value: { m: 0 } },
      },
    ]);
    known.adopt(rebased, none);
    expect(known.get(4)).toMatchObject({
      newestBaseSeq: 3,
      current: { version: 2, value: { m: 0 }, deltasSinceBase: 0 },
    });
    known.adopt(store(index, [retire(4)]), none);
    expect(known.get(4)).toBeUndefined();
  });

  it("takes a changed document it does not hold from `before`, and skips one `before` does not know", () => {
    const index = seeded();
    const plan = store(index, [delta(4, 1, [["s", ["n"], 5]])]);
    const known = new KnownDocuments();
    known.adopt(plan, () => undefined);
    expect(known.get(4)).toBeUndefined();
    known.adopt(plan, () => ({
      createdAt: 1,
      retiredAt: undefined,
      currentOnly: true,
      newestBaseSeq: 1,
    }));
    expect(known.get(4)).toMatchObject({
      createdAt: 1,
      newestBaseSeq: 1,
      current: { value: { n: 5 } },
    });
  });

  it("holds at most its limit, dropping the least recently used", () => {
    const index: Index = new MemoryIndex();
    const known = new KnownDocuments(2);
    known.adopt(
      store(index, [conv(1), create(4, {}, { key: "a" }), create(5, {}, { key: "b" })]),
      () => undefined,
    );
    known.get(4);
    known.adopt(store(index, [create(6, {}, { key: "c" })]), () => undefined);
    expect([
      known.get(4) !== undefined,
      known.get(5) !== undefined,
      known.get(6) !== undefined,
    ]).toEqual([true, false, true]);
  });
});
