import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Seq } from "@durably/core";

/** A fresh temporary directory, removed by the returned cleanup. */
export function tempDir(prefix = "durably-sqlite-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A `receive` callback that records every seq, in call order. */
export function seqRecorder(): { seqs: Seq[]; receive: (index: number, seq: Seq) => void } {
  const seqs: Seq[] = [];
  return { seqs, receive: (index, seq) => void (seqs[index] = seq) };
}
