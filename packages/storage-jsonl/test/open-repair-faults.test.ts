import { existsSync, readdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StoragePoisoned, type EntryId, type Storage } from "@durably/core";
import { beforeAll, describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import {
  commitAfterRecovery,
  faultCases,
  fixtureBatch,
  fixtureState,
  reopenKeepsThatCommit,
  runFaultCases,
  settled,
  templateDirectory,
} from "./support/fault-cases.js";
import { FaultyFileSystem, InjectedFault } from "./support/faulty-file-system.js";
import { matching } from "./support/matching.js";
import { commitAll, w } from "./support/records.js";

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

const confirmedState = (storage: Storage) =>
  fixtureState(storage, { historyAt: 1, tasks: [30, 31] });

/** Bytes open must keep somewhere: in place, or as a file under recovered/. */
interface Evidence {
  label: string;
  bytes: Buffer;
}

async function buildTemplate(path: string): Promise<{ evidence: Evidence[] }> {
  const storage = await openJsonlStorage(path);
  await commitAll(storage, fixtureBatch(w.task(31, 1, { status: "running", checkpoint: 1 })));
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
    const template = templateDirectory();
    const fresh = template.fresh;
    let evidence: Evidence[] = [];
    let expected: Record<string, unknown>;
    let operations: string[] = [];

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
      // A read that fails after reading changed nothing either: "before" covers it.
      const cases = faultCases(operations, /^(read|list|mkdir) /);
      const failures = await runFaultCases(operations, cases, fresh, async (fault, dir, fail) => {
        const faulty = new FaultyFileSystem();
        faulty.count(fault);
        const outcome = await settled(openJsonlStorage(dir.path, { fsync, fs: faulty }));
        faulty.stop();
        if (faulty.fired === undefined) fail("the fault never fired");
        if (outcome instanceof Error) {
          const cause = outcome instanceof StoragePoisoned ? outcome.cause : outcome;
          if (!(cause instanceof InjectedFault))
            fail(`open failed with ${String(outcome)}, not the fault`);
        } else {
          // Open may carry on past a fault only if what it shows is the confirmed state.
          const seen = await confirmedState(outcome as Storage);
          if (JSON.stringify(seen) !== JSON.stringify(expected))
            fail(`open resolved with ${JSON.stringify(seen)}`);
          await (outcome as Storage).close().catch(() => undefined);
        }
        const lost = evidenceKept(dir.path, evidence);
        if (lost.length > 0) fail(`lost after the fault: ${lost.join(", ")}`);
        // The lock was released, and the next open repairs.
        const reopened = await openJsonlStorage(dir.path, { fsync });
        const seen = await confirmedState(reopened);
        if (JSON.stringify(seen) !== JSON.stringify(expected))
          fail(`reopened to ${JSON.stringify(seen)}`);
        await commitAfterRecovery(reopened);
        const lostAfter = evidenceKept(dir.path, evidence);
        if (lostAfter.length > 0) fail(`lost after reopen: ${lostAfter.join(", ")}`);
        const files = readdirSync(dir.path);
        for (const gone of ["doc-21.jsonl", "task-31.jsonl", "doc-23.jsonl", "doc-20.jsonl.tmp"])
          if (files.includes(gone)) fail(`${gone} is still in place after reopen`);
        const again = await reopenKeepsThatCommit(dir.path, fail);
        if (again.recovery.truncated.length + again.recovery.setAside.length > 0)
          fail(`a third open still repaired: ${JSON.stringify(again.recovery)}`);
        await again.close();
      });
      console.info(
        `${fsync ? "fsync" : "no fsync"}: ${cases.length} fault cases over ${operations.length} operations of open: ${operations.join(", ")}`,
      );
      expect(failures).toEqual([]);
      expect(cases.length).toBeGreaterThan(25);
    });
  });
}
