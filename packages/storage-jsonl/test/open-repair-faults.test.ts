import {
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import {
  StoragePoisoned,
  type DocumentId,
  type EntryId,
  type Seq,
  type Storage,
  type TaskId,
} from "@durably/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { FaultyFileSystem, InjectedFault, type FaultMode } from "./support/faulty-file-system.js";
import { matching } from "./support/matching.js";
import { commitAll, w } from "./support/records.js";
import { tempDir } from "./support/temp-dir.js";

/**
 * A directory that needs every repair open makes: a torn final marker, an
 * unconfirmed sidecar tail, a sidecar no marker names, a leftover temp
 * file, two obsolete sidecars a crash left behind, and a current-only
 * document worth rewriting. Each file operation of open (the repairs
 * included) fails in turn, before acting, after acting, or half way: open
 * must fail cleanly (nothing confirmed changed, the lock released) or
 * succeed, and the next open must give exactly the confirmed state with
 * every cut byte kept under recovered/.
 */

async function confirmedState(storage: Storage) {
  const doc = async (id: number) => (await storage.document(id as DocumentId, "current"))?.value;
  const page = await storage.scanEntries({ conversationId: 1 as never, order: "ascending" }, 100);
  return {
    entries: page.items.map((e) => e.id),
    doc20: await doc(20),
    doc21: await doc(21),
    doc22: await doc(22),
    doc22AtSeq1: (await storage.document(22 as DocumentId, 1 as Seq))?.value,
    doc23: await doc(23),
    task30: (await storage.task(30 as TaskId))?.state,
    task31: (await storage.task(31 as TaskId))?.state,
  };
}

/** Bytes open must keep somewhere: in place, or as a file under recovered/. */
interface Evidence {
  label: string;
  bytes: Buffer;
}

async function buildTemplate(path: string): Promise<{ evidence: Evidence[] }> {
  const storage = await openJsonlStorage(path);
  await commitAll(storage, [
    w.conversation(1),
    w.entry(10, 1, "first"),
    w.createDoc(20, 1, { text: "a" }),
    w.createDoc(21, 1, { text: "b" }),
    w.createDoc(22, 1, { text: "r" }, "rewindable"),
    w.task(30, 1, { status: "running", checkpoint: 1 }),
    w.task(31, 1, { status: "running", checkpoint: 1 }),
  ]);
  for (let i = 0; i < 4; i++) await commitAll(storage, [w.setText(20, `a${i}`)]);
  await storage.close();
  const file = (name: string) => join(path, name);
  const doc21 = readFileSync(file("doc-21.jsonl"));
  const task31 = readFileSync(file("task-31.jsonl"));
  const doc20 = readFileSync(file("doc-20.jsonl"));
  // A base makes doc 20 worth rewriting; a retirement and a terminal task make two files obsolete.
  const again = await openJsonlStorage(path);
  await commitAll(again, [
    w.entry(11, 1, "second"),
    w.base(20, { text: "A" }),
    w.retire(21),
    w.task(31, 1, { status: "terminal", outcome: { kind: "completed" } }),
    w.setText(22, "r2"),
  ]);
  await again.close();
  const rewritten = readFileSync(file("doc-20.jsonl"));
  // The next call crashed: its records are written, its markers half.
  const confirmedMain = readFileSync(file("main.jsonl")).length;
  const doc22Confirmed = readFileSync(file("doc-22.jsonl")).length;
  const last = await openJsonlStorage(path);
  await commitAll(last, [
    w.entry(12, 1, "lost"),
    w.setText(22, "lost"),
    w.createDoc(23, 1, { text: "lost" }),
  ]);
  await last.close();
  const main = readFileSync(file("main.jsonl"));
  truncateSync(file("main.jsonl"), confirmedMain + Math.floor((main.length - confirmedMain) / 2));
  // And reclamation had not run: the obsolete files are back, doc 20 not yet rewritten, a temp file half written.
  writeFileSync(file("doc-21.jsonl"), doc21);
  writeFileSync(file("task-31.jsonl"), task31);
  writeFileSync(file("doc-20.jsonl"), Buffer.concat([doc20, rewritten]));
  writeFileSync(file("doc-20.jsonl.tmp"), rewritten.subarray(0, 40));
  return {
    evidence: [
      {
        label: "main.jsonl torn marker",
        bytes: readFileSync(file("main.jsonl")).subarray(confirmedMain),
      },
      {
        label: "doc-22.jsonl unconfirmed tail",
        bytes: readFileSync(file("doc-22.jsonl")).subarray(doc22Confirmed),
      },
      { label: "doc-23.jsonl (no marker names it)", bytes: readFileSync(file("doc-23.jsonl")) },
      { label: "doc-20.jsonl.tmp", bytes: readFileSync(file("doc-20.jsonl.tmp")) },
    ],
  };
}

/** Where each piece of evidence is now: still in its file, or copied whole under recovered/. */
function evidenceKept(path: string, evidence: readonly Evidence[]): string[] {
  const recovered = join(path, "recovered");
  const saved = existsSync(recovered)
    ? readdirSync(recovered).map((name) => readFileSync(join(recovered, name)))
    : [];
  const inPlace = readdirSync(path)
    .filter((name) => name.includes(".jsonl"))
    .map((name) => readFileSync(join(path, name)));
  return evidence
    .filter(
      (e) =>
        !saved.some((bytes) => bytes.equals(e.bytes)) &&
        !inPlace.some((bytes) => bytes.subarray(bytes.length - e.bytes.length).equals(e.bytes)),
    )
    .map((e) => e.label);
}

for (const fsync of [false, true]) {
  describe(`open repair faults${fsync ? " (fsync)" : ""}`, () => {
    const template = tempDir();
    let evidence: Evidence[] = [];
    let expected: Awaited<ReturnType<typeof confirmedState>>;
    let operations: string[] = [];

    const fresh = () => {
      const dir = tempDir();
      cpSync(template.path, dir.path, { recursive: true });
      return dir;
    };

    beforeAll(async () => {
      ({ evidence } = await buildTemplate(template.path));
      const dir = fresh();
      const faulty = new FaultyFileSystem();
      faulty.count();
      const storage = await openJsonlStorage(dir.path, { fsync, fs: faulty });
      faulty.stop();
      operations = [...faulty.log];
      expected = await confirmedState(storage);
      await storage.close();
      dir.remove();
    });
    afterAll(() => template.remove());

    it("a clean open makes every repair: cuts kept aside, strays moved, obsolete files removed, the document rewritten", () => {
      expect(expected).toEqual({
        entries: [10, 11],
        doc20: { text: "A" },
        doc21: undefined,
        doc22: { text: "r2" },
        doc22AtSeq1: { text: "r" },
        doc23: undefined,
        task30: { status: "running", checkpoint: 1 },
        task31: { status: "terminal", outcome: { kind: "completed" } },
      });
      for (const op of [
        "truncate main.jsonl",
        "truncate doc-22.jsonl",
        "rename doc-23.jsonl",
        "rename doc-20.jsonl.tmp",
        "remove doc-21.jsonl",
        "remove task-31.jsonl",
        "rename doc-20.jsonl.tmp",
      ])
        expect(operations).toContain(op);
      if (fsync) expect(operations).toContain("flush recovered");
    });

    it("a failed removal of an obsolete sidecar does not fail open: it is reported, and the next open removes it", async () => {
      const dir = fresh();
      try {
        const faulty = new FaultyFileSystem();
        faulty.count({ at: operations.indexOf("remove task-31.jsonl"), mode: "before" });
        const storage = await openJsonlStorage(dir.path, { fsync, fs: faulty });
        faulty.stop();
        expect(storage.recovery.removed).toEqual(["doc-21.jsonl"]);
        expect(storage.recovery.deferred).toEqual([
          { file: "task-31.jsonl", error: matching(/injected fault: remove task-31\.jsonl/) },
        ]);
        expect(await confirmedState(storage)).toEqual(expected);
        await commitAll(storage, [w.entry(99, 1, "still available")]);
        await storage.close();
        expect(readdirSync(dir.path)).toContain("task-31.jsonl");
        const reopened = await openJsonlStorage(dir.path, { fsync });
        expect(reopened.recovery.removed).toEqual(["task-31.jsonl"]);
        expect((await reopened.entry(99 as EntryId))?.entry.data).toBe("still available");
        await reopened.close();
      } finally {
        dir.remove();
      }
    });

    it("every file operation of open failing before, after or half way leaves the confirmed state and every cut byte, and a later open repairs", async () => {
      const cases: { at: number; mode: FaultMode }[] = [];
      operations.forEach((op, at) => {
        // A read that fails after reading changed nothing either: "before" covers it.
        const readOnly = /^(read|list|mkdir) /.test(op);
        const modes: FaultMode[] = readOnly ? ["before"] : ["before", "after"];
        if (op.startsWith("append ") || op.startsWith("write ")) modes.push("half");
        for (const mode of modes) cases.push({ at, mode });
      });
      const failures: string[] = [];
      for (const fault of cases) {
        const label = `${operations[fault.at]} #${fault.at} fails ${fault.mode}`;
        const dir = fresh();
        try {
          const faulty = new FaultyFileSystem();
          faulty.count(fault);
          const outcome = await openJsonlStorage(dir.path, { fsync, fs: faulty }).then(
            (storage) => storage,
            (error: unknown) => error,
          );
          faulty.stop();
          if (faulty.fired === undefined) failures.push(`${label}: the fault never fired`);
          if (outcome instanceof Error) {
            const cause = outcome instanceof StoragePoisoned ? outcome.cause : outcome;
            if (!(cause instanceof InjectedFault))
              failures.push(`${label}: open failed with ${String(outcome)}, not the fault`);
          } else {
            // Open may carry on past a fault only if what it shows is the confirmed state.
            const seen = await confirmedState(outcome as Storage);
            if (JSON.stringify(seen) !== JSON.stringify(expected))
              failures.push(`${label}: open resolved with ${JSON.stringify(seen)}`);
            await (outcome as Storage).close().catch(() => undefined);
          }
          const lost = evidenceKept(dir.path, evidence);
          if (lost.length > 0) failures.push(`${label}: lost after the fault: ${lost.join(", ")}`);
          // The lock was released, and the next open repairs.
          const reopened = await openJsonlStorage(dir.path, { fsync });
          const seen = await confirmedState(reopened);
          if (JSON.stringify(seen) !== JSON.stringify(expected))
            failures.push(`${label}: reopened to ${JSON.stringify(seen)}`);
          await commitAll(reopened, [w.entry(99, 1, "after recovery")]);
          await reopened.close();
          const lostAfter = evidenceKept(dir.path, evidence);
          if (lostAfter.length > 0)
            failures.push(`${label}: lost after reopen: ${lostAfter.join(", ")}`);
          const files = readdirSync(dir.path);
          for (const gone of ["doc-21.jsonl", "task-31.jsonl", "doc-23.jsonl", "doc-20.jsonl.tmp"])
            if (files.includes(gone))
              failures.push(`${label}: ${gone} is still in place after reopen`);
          const again = await openJsonlStorage(dir.path);
          if ((await again.entry(99 as EntryId)) === undefined)
            failures.push(`${label}: a commit after recovery was lost`);
          if (again.recovery.truncated.length + again.recovery.setAside.length > 0)
            failures.push(
              `${label}: a third open still repaired: ${JSON.stringify(again.recovery)}`,
            );
          await again.close();
        } finally {
          dir.remove();
        }
      }
      console.info(
        `${fsync ? "fsync" : "no fsync"}: ${cases.length} fault cases over ${operations.length} operations of open: ${operations.join(", ")}`,
      );
      expect(failures).toEqual([]);
      expect(cases.length).toBeGreaterThan(25);
    });
  });
}
