import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { StoragePoisoned, type Batch, type Storage } from "@durably/core";
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
import { commitAll, w } from "./support/records.js";

/**
 * For every file operation one commit call performs (appends, flushes,
 * the marker append, and the reclamation it authorises: temp write, rename,
 * remove) and every way it can fail (before acting, after acting, half its
 * bytes written), the instance is poisoned and a reopen shows exactly the
 * confirmed state: nothing of the call when its markers did not land, all
 * of it when they did, the first batch alone when a half write kept only
 * the first marker.
 */

const setup: Batch[] = [
  fixtureBatch(),
  [w.setText(20, "a2"), w.setText(22, "r2"), w.task(30, 1, { status: "running", checkpoint: 2 })],
];

// The call under test: a base that makes doc 20's file worth rewriting, a new
// document (a new file), a rewindable delta; then a retirement and a terminal
// task whose files are removed once the markers are in main.jsonl.
const batch0: Batch = [
  w.entry(11, 1, "second"),
  w.base(20, { text: "A" }),
  w.createDoc(23, 1, { text: "new" }),
  w.setText(22, "r3"),
];
const batch1: Batch = [
  w.entry(12, 1, "third"),
  w.retire(21),
  w.task(30, 1, { status: "terminal", outcome: { kind: "completed" } }),
];

const snapshot = (storage: Storage) =>
  fixtureState(storage, { historyAt: 2, tasks: [30], entries: [12] });
type Snapshot = Record<string, unknown>;

for (const fsync of [true, false]) {
  describe(`fault injection${fsync ? " (fsync)" : ""}`, () => {
    const template = templateDirectory();
    const fresh = template.fresh;
    const states: Snapshot[] = [];
    let operations: string[] = [];
    let firstMarkerFitsHalf = false;

    beforeAll(async () => {
      const storage = await openJsonlStorage(template.path, { fsync });
      await commitAll(storage, ...setup);
      states.push(await snapshot(storage));
      await storage.close();
      // The confirmed states a fault may leave: none, the first, or both batches of the call.
      for (const batches of [[batch0], [batch0, batch1]]) {
        const dir = fresh();
        const faulty = new FaultyFileSystem();
        const s = await openJsonlStorage(dir.path, { fsync, fs: faulty });
        faulty.count();
        await commitAll(s, ...batches);
        await s.commit([], () => undefined); // waits for the reclamation the call authorised
        faulty.stop();
        if (batches.length === 2) operations = [...faulty.log];
        await s.close();
        const reopened = await openJsonlStorage(dir.path);
        states.push(await snapshot(reopened));
        await reopened.close();
        if (batches.length === 2) {
          const lines = readFileSync(join(dir.path, "main.jsonl"), "utf8").trimEnd().split("\n");
          const [a, b] = lines.slice(-2).map((l) => Buffer.byteLength(l) + 1) as [number, number];
          firstMarkerFitsHalf = a <= Math.floor((a + b) / 2);
        }
        dir.remove();
      }
    });

    it("the call performs every step of the publication protocol and its reclamation, in order", () => {
      const appendMain = operations.indexOf("append main.jsonl");
      expect(appendMain).toBeGreaterThan(0);
      const sidecarAppends = operations
        .filter((op) => /^append (doc|task)-/.test(op))
        .map((op) => operations.indexOf(op));
      expect(sidecarAppends.length).toBeGreaterThanOrEqual(3);
      expect(Math.max(...sidecarAppends)).toBeLessThan(appendMain);
      const after = operations.slice(appendMain);
      expect(after).toEqual(
        expect.arrayContaining([
          "rename doc-20.jsonl.tmp",
          "remove doc-21.jsonl",
          "remove task-30.jsonl",
        ]),
      );
      if (fsync) {
        const flushes = operations.slice(0, appendMain).filter((op) => op.startsWith("flush "));
        expect(flushes).toEqual(
          expect.arrayContaining([
            "flush doc-20.jsonl",
            "flush doc-22.jsonl",
            "flush doc-23.jsonl",
          ]),
        );
        expect(operations[appendMain + 1]).toBe("flush main.jsonl");
        expect(operations.indexOf("flush doc-20.jsonl.tmp")).toBeLessThan(
          operations.indexOf("rename doc-20.jsonl.tmp"),
        );
      }
      expect(states[1]).not.toEqual(states[0]);
      expect(states[2]).not.toEqual(states[1]);
    });

    it("every file operation of a commit, failing before, after or half way, poisons the instance and reopens to exactly the confirmed state", async () => {
      expect(operations.length).toBeGreaterThan(8);
      const appendMain = operations.indexOf("append main.jsonl");
      const cases = faultCases(operations);
      const failures = await runFaultCases(operations, cases, fresh, async (fault, dir, fail) => {
        const faulty = new FaultyFileSystem();
        const storage = await openJsonlStorage(dir.path, { fsync, fs: faulty });
        faulty.count(fault);
        const outcome = await settled(storage.commit([batch0, batch1], () => undefined));
        const barrier = await settled(storage.commit([], () => undefined));
        faulty.stop();
        await storage.close();
        if (faulty.fired === undefined) fail("the fault never fired");
        // Before the markers land, the call itself must fail; a reclamation fault poisons the next call.
        const poisonedBy = fault.at <= appendMain ? outcome : barrier;
        if (
          !(poisonedBy instanceof StoragePoisoned) ||
          !(poisonedBy.cause instanceof InjectedFault)
        )
          fail(
            `expected StoragePoisoned caused by the fault, got ${poisonedBy instanceof Error ? String(poisonedBy) : `a resolved call: ${JSON.stringify(poisonedBy)}`}`,
          );
        if (!(barrier instanceof StoragePoisoned)) fail("a later call was not rejected");

        const landed =
          fault.at > appendMain || (fault.at === appendMain && fault.mode === "after")
            ? 2
            : fault.at === appendMain && fault.mode === "half" && firstMarkerFitsHalf
              ? 1
              : 0;
        const reopened = await openJsonlStorage(dir.path, { fsync });
        const seen = await snapshot(reopened);
        try {
          expect(seen).toEqual(states[landed]);
        } catch {
          fail(`reopened to ${JSON.stringify(seen)}, expected ${JSON.stringify(states[landed])}`);
        }
        // Recovery finished what the fault interrupted: no unconfirmed or obsolete file is left.
        const files = readdirSync(dir.path);
        if (files.some((f) => f.endsWith(".tmp")))
          fail(`a temp file survived reopen: ${files.join(", ")}`);
        if (landed === 2 && (files.includes("doc-21.jsonl") || files.includes("task-30.jsonl")))
          fail(`obsolete sidecars survived reopen: ${files.join(", ")}`);
        if (landed === 0 && files.includes("doc-23.jsonl"))
          fail("an unconfirmed sidecar survived reopen");
        // And it keeps working.
        await commitAfterRecovery(reopened);
        await (await reopenKeepsThatCommit(dir.path, fail)).close();
      });
      console.info(
        `${fsync ? "fsync" : "no fsync"}: ${cases.length} fault cases over ${operations.length} operations: ${operations.join(", ")}; first marker fits half: ${firstMarkerFitsHalf}`,
      );
      expect(failures).toEqual([]);
      expect(cases.length).toBeGreaterThan(20);
    });
  });
}
