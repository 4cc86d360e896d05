/**
 * Crash child: opens the storage at argv[2] and commits step after step
 * (entry + document change + task each), printing `ack <seq> <n> <entryId>`
 * once each commit is acknowledged, until the parent kills it.
 */
import { open } from "./open-child.js";
import { lastStep, setupBatch, stepBatch } from "./workload.js";

const path = process.argv[2];
if (path === undefined) throw new Error("usage: commit-loop.ts <path>");
const storage = await open(path);
let n = await lastStep(storage);
if (n === undefined) {
  await storage.commit([setupBatch], () => undefined);
  n = 0;
}
process.stdout.write(`ready ${n}\n`);
for (;;) {
  n += 1;
  const entryId = await storage.mintId();
  let seq = 0;
  const result = await storage.commit([stepBatch(n, entryId)], (_, s) => (seq = s));
  if (result.stored !== 1) throw result.refused ?? new Error("commit stored nothing");
  // Linux writes to a pipe synchronously: once this returns, the parent can read the ack.
  process.stdout.write(`ack ${seq} ${n} ${entryId}\n`);
}
