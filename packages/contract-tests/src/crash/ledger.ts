import type { ConversationId, Cursor, EntryId, Json, Storage, TaskId } from "@durably/core";
import { jsonEqual } from "@durably/core";
import { check } from "./failure.js";
import type { BatchTag } from "./observed-storage.js";
import type { Ack, CommitterIds } from "./protocol.js";
import { CounterDoc, isStepMark, STEP_ENTRY_KIND, stepOfEntry, taskMark } from "./workload.js";
import type { StepMark } from "./workload.js";

const PAGE = 256;

/** The newest step the parent has verified for one committer. */
interface CommitterState {
  ids: CommitterIds;
  top: StepMark;
  documentId: number | undefined;
}

/** What one run of a child (from spawn to SIGKILL) reported. */
export interface ChildReport {
  acks: readonly Ack[];
  intents: readonly BatchTag[];
  /** The steps the child's Session read back after opening; absent when killed before that. */
  nextSteps: readonly number[] | undefined;
}

/** Counters for the run summary. */
export interface LedgerStats {
  verifiedCommits: number;
  acknowledged: number;
  /** Stored although the kill came before the child heard back. */
  storedUnacknowledged: number;
  /** Announced to storage but not stored (lost with the kill, legitimately). */
  lost: number;
}

function stepKey(committer: number, step: number): string {
  return `${committer}:${step}`;
}

/**
 * The parent's model of what the storage must hold, updated after each kill
 * from what the storage returns and what the child reported. Every check
 * reads through the `Storage` port, not through a Session, so it sees what
 * is really stored.
 */
export class Ledger {
  readonly committers: CommitterState[];
  /** Highest commit seq seen stored. */
  maxSeq = 0;
  /** Highest record id seen stored. */
  maxId = 0;
  private readonly storedIds = new Set<number>();
  readonly stats: LedgerStats = {
    verifiedCommits: 0,
    acknowledged: 0,
    storedUnacknowledged: 0,
    lost: 0,
  };

  constructor(committers: readonly CommitterIds[]) {
    this.committers = committers.map((ids, committer) => ({
      ids,
      top: { committer, step: 0, entryId: 0 },
      documentId: undefined,
    }));
    for (const ids of committers) {
      this.noteId(ids.conversationId, "conversation");
      this.noteId(ids.taskId, "task");
    }
  }

  private noteId(id: number, what: string): void {
    check(
      !this.storedIds.has(id),
      "ids are never reused",
      () => `${what} id ${id} is already used by another stored record`,
    );
    this.storedIds.add(id);
    if (id > this.maxId) this.maxId = id;
  }

  /** The next step a fresh Session must resume at, per committer. */
  expectedNextSteps(): number[] {
    return this.committers.map((state) => state.top.step + 1);
  }

  /** Records a step the parent itself committed (and saw acknowledged). */
  adoptOwnCommit(ack: Ack): void {
    const state = this.committers[ack.committer];
    if (state === undefined) throw new RangeError(`no committer ${ack.committer}`);
    check(
      ack.step === state.top.step + 1,
      "harness",
      () => `own commit of step ${ack.step} does not follow ${state.top.step}`,
    );
    check(
      ack.entryId > this.maxId,
      "ids are never reused",
      () =>
        `entry id ${ack.entryId} minted after reopen is not above the highest stored id ${this.maxId}`,
    );
    check(
      ack.seq === undefined || ack.seq > this.maxSeq,
      "seqs strictly increase",
      () =>
        `seq ${ack.seq} of a commit after reopen is not above the highest stored seq ${this.maxSeq}`,
    );
    this.noteId(ack.entryId, "entry");
    if (ack.seq !== undefined) this.maxSeq = ack.seq;
    state.top = { committer: ack.committer, step: ack.step, entryId: ack.entryId };
    this.stats.verifiedCommits++;
  }

  /**
   * Checks the reopened storage against the ledger and what the killed child
   * reported, then advances the ledger to what is stored.
   */
  async verify(storage: Storage, report: ChildReport): Promise<void> {
    const resumed = report.nextSteps;
    if (resumed !== undefined) {
      const expected = this.expectedNextSteps();
      check(
        jsonEqual(resumed as Json, expected),
        "reopen sees the committed state",
        () =>
          `the child's Session found step(s) ${JSON.stringify(resumed.map((s) => s - 1))} as the newest per committer, but step(s) ${JSON.stringify(expected.map((s) => s - 1))} were stored and verified before the child opened the storage`,
      );
    }

    const startMaxId = this.maxId;
    const startMaxSeq = this.maxSeq;
    /** Every step stored since the last verification, with its seq. */
    const landed = new Map<string, { entryId: number; seq: number }>();
    const newTops: StepMark[] = [];

    for (const [committer, state] of this.committers.entries()) {
      const fresh = await this.newEntries(storage, committer, state);
      for (const mark of fresh) {
        const stored = await storage.entry(mark.entryId as EntryId);
        check(
          stored !== undefined,
          "no commit is half present",
          () =>
            `entry ${mark.entryId} is listed by scanEntries but entry(${mark.entryId}) returns nothing`,
        );
        check(
          mark.entryId > startMaxId,
          "ids are never reused",
          () =>
            `entry ${mark.entryId} (committer ${committer}, step ${mark.step}) stored after reopen has an id not above the highest id stored before, ${startMaxId}`,
        );
        this.noteId(mark.entryId, "entry");
        landed.set(stepKey(committer, mark.step), { entryId: mark.entryId, seq: stored.commitSeq });
      }
      const top = fresh.at(-1) ?? state.top;
      await this.checkAgreement(storage, committer, state, top);
      newTops.push(top);
    }

    for (const ack of report.acks) {
      const stored = landed.get(stepKey(ack.committer, ack.step));
      check(
        stored !== undefined,
        "acknowledged commits survive",
        () =>
          `committer ${ack.committer} step ${ack.step} (entry ${ack.entryId}${ack.seq === undefined ? "" : `, seq ${ack.seq}`}) was acknowledged but is not stored after the kill`,
      );
      check(
        stored.entryId === ack.entryId,
        "acknowledged commits survive",
        () =>
          `committer ${ack.committer} step ${ack.step} was acknowledged with entry ${ack.entryId} but the stored step has entry ${stored.entryId}`,
      );
      check(
        ack.seq === undefined || ack.seq === stored.seq,
        "acknowledged commits survive",
        () =>
          `entry ${ack.entryId} was acknowledged with seq ${ack.seq} but entry().commitSeq is ${stored.seq}`,
      );
    }

    this.checkPrefix(report.intents, landed, startMaxSeq);

    this.stats.acknowledged += report.acks.length;
    this.stats.storedUnacknowledged += landed.size - report.acks.length;
    this.stats.verifiedCommits += landed.size;
    for (const { seq } of landed.values()) if (seq > this.maxSeq) this.maxSeq = seq;
    for (const [committer, top] of newTops.entries()) {
      const state = this.committers[committer];
      if (state) state.top = top;
    }

    const minted = await storage.mintId();
    check(
      minted > this.maxId && !this.storedIds.has(minted),
      "ids are never reused",
      () => `mintId() after reopen returned ${minted}; the highest stored id is ${this.maxId}`,
    );
  }

  /** Entries of the committer's conversation above its last verified one: steps must follow on without a gap. */
  private async newEntries(
    storage: Storage,
    committer: number,
    state: CommitterState,
  ): Promise<StepMark[]> {
    const { top, ids } = state;
    if (top.entryId > 0) {
      const previous = await storage.entry(top.entryId as EntryId);
      const mark = previous === undefined ? undefined : stepOfEntry(previous.entry);
      check(
        mark !== undefined && mark.committer === committer && mark.step === top.step,
        "acknowledged commits survive",
        () =>
          `entry ${top.entryId} (committer ${committer}, step ${top.step}), verified after an earlier kill, ${previous === undefined ? "is gone" : `now reads ${JSON.stringify(previous.entry.data)}`}`,
      );
    }
    const out: StepMark[] = [];
    let cursor: Cursor | undefined;
    let expectedStep = top.step + 1;
    do {
      const page = await storage.scanEntries(
        {
          conversationId: ids.conversationId as ConversationId,
          minEntryId: (top.entryId + 1) as EntryId,
          order: "ascending",
        },
        PAGE,
        cursor,
      );
      for (const entry of page.items) {
        const mark = stepOfEntry(entry);
        check(
          entry.kind === STEP_ENTRY_KIND && mark !== undefined && mark.committer === committer,
          "no commit is half present",
          () =>
            `conversation ${ids.conversationId} holds an entry the suite never wrote: ${JSON.stringify(entry)}`,
        );
        check(
          mark.step === expectedStep,
          "what survives is a prefix of the commits",
          () =>
            `committer ${committer}: after step ${expectedStep - 1} the next stored entry (${entry.id}) is step ${mark.step}, expected ${expectedStep}`,
        );
        out.push({ committer, step: mark.step, entryId: entry.id });
        expectedStep++;
      }
      cursor = page.next;
    } while (cursor !== undefined);
    return out;
  }

  /** Entry, document and task of a committer must all carry its newest stored step. */
  private async checkAgreement(
    storage: Storage,
    committer: number,
    state: CommitterState,
    top: StepMark,
  ): Promise<void> {
    const expected = { committer, step: top.step, entryId: top.entryId };
    const scope = {
      kind: "conversation" as const,
      conversationId: state.ids.conversationId as ConversationId,
    };
    const record = await storage.findDocument({ kind: CounterDoc.kind, scope }, "current");
    if (record === undefined) {
      check(
        top.step === 0,
        "no commit is half present",
        () =>
          `committer ${committer}: entry ${top.entryId} of step ${top.step} is stored but its counter document is missing`,
      );
    } else {
      check(
        state.documentId === undefined || state.documentId === record.id,
        "no commit is half present",
        () =>
          `committer ${committer}: the counter document changed incarnation from ${state.documentId} to ${record.id}`,
      );
      if (state.documentId === undefined) this.noteId(record.id, "document");
      state.documentId = record.id;
      const document = await storage.document(record.id, "current");
      const value = document?.value;
      const agrees =
        top.step === 0
          ? !isStepMark(value) || value.step === 0
          : isStepMark(value) && jsonEqual(value, expected);
      check(
        agrees,
        "no commit is half present",
        () =>
          `committer ${committer}: newest stored entry is ${JSON.stringify(expected)} but document ${record.id} holds ${JSON.stringify(value)}`,
      );
    }
    const task = await storage.task(state.ids.taskId as TaskId);
    check(
      task !== undefined,
      "no commit is half present",
      () => `committer ${committer}: task ${state.ids.taskId} is missing`,
    );
    const mark = taskMark(task);
    const agrees =
      top.step === 0
        ? !isStepMark(mark) || mark.step === 0
        : isStepMark(mark) && jsonEqual(mark, expected);
    check(
      agrees,
      "no commit is half present",
      () =>
        `committer ${committer}: newest stored entry is ${JSON.stringify(expected)} but task ${task.id} holds ${JSON.stringify(mark)}`,
    );
  }

  /**
   * What landed must be exactly the first k batches the child sent to
   * storage, in order, with increasing seqs above every earlier seq.
   */
  private checkPrefix(
    intents: readonly BatchTag[],
    landed: ReadonlyMap<string, { seq: number }>,
    startMaxSeq: number,
  ): void {
    const announced = new Set<string>();
    let gap: string | undefined;
    let previousSeq = startMaxSeq;
    for (const tag of intents) {
      if (tag === null) continue;
      const key = stepKey(tag[0], tag[1]);
      check(
        !announced.has(key),
        "harness",
        () => `committer ${tag[0]} step ${tag[1]} was sent to storage twice`,
      );
      announced.add(key);
      const stored = landed.get(key);
      if (stored === undefined) {
        gap ??= key;
        this.stats.lost++;
        continue;
      }
      check(
        gap === undefined,
        "what survives is a prefix of the commits",
        () => `step ${key} (committer:step) is stored but the earlier commit ${gap} is not`,
      );
      check(
        stored.seq > previousSeq,
        "seqs strictly increase",
        () => `step ${key} has seq ${stored.seq}, not above the seq ${previousSeq} before it`,
      );
      previousSeq = stored.seq;
    }
    for (const key of landed.keys())
      check(
        announced.has(key),
        "harness",
        () => `step ${key} (committer:step) is stored but the child never announced it`,
      );
  }

  /** End of a scenario: every committer's whole history is exactly steps 1..top, in id order. */
  async verifyWholeHistory(storage: Storage): Promise<void> {
    for (const [committer, state] of this.committers.entries()) {
      let cursor: Cursor | undefined;
      let step = 0;
      let lastId = 0;
      do {
        const page = await storage.scanEntries(
          { conversationId: state.ids.conversationId as ConversationId, order: "ascending" },
          PAGE,
          cursor,
        );
        for (const entry of page.items) {
          const mark = stepOfEntry(entry);
          step++;
          check(
            mark?.step === step && mark.committer === committer && entry.id > lastId,
            "what survives is a prefix of the commits",
            () =>
              `committer ${committer}: stored history entry ${entry.id} is ${JSON.stringify(entry.data)}, expected step ${step}`,
          );
          lastId = entry.id;
        }
        cursor = page.next;
      } while (cursor !== undefined);
      check(
        step === state.top.step,
        "acknowledged commits survive",
        () =>
          `committer ${committer}: history holds ${step} steps, ${state.top.step} were verified`,
      );
    }
  }
}
