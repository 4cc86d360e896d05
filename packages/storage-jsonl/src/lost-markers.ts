import { StorageCorrupted } from "@durably/core";
import { MAIN_FILE } from "./line-format.js";
import type { UnconfirmedRecord } from "./recovery-sidecars.js";

/** What the sidecars show beyond main.jsonl's last marker. */
export interface BeyondTheLog {
  /** Markers in main.jsonl, and the seq of the last. */
  markers: number;
  lastSeq: number;
  unconfirmed: readonly UnconfirmedRecord[];
  /** The highest call among confirmed records. */
  highestConfirmedCall: number;
  /** Current-only document files that start with a base of a seq main.jsonl does not hold. */
  rewritten: readonly { file: string; line: number; seq: number }[];
}

const where = (r: { file: string; line: number }) => `${r.file} line ${r.line}`;

/**
 * Fails with `StorageCorrupted` naming main.jsonl when the sidecars prove
 * that confirmed lines of main.jsonl were lost (a cut at a line boundary
 * looks like a shorter log otherwise). Commit calls run one at a time, and
 * a call writes its sidecar records before its markers, so only the last
 * call can have records without markers: unconfirmed records of two calls,
 * of a call that starts past the seq after the last marker, or of a call
 * older than a confirmed one, mean markers went missing. So does a
 * current-only document file rewritten from a base main.jsonl lacks. Format-1
 * records do not name their call and cannot be judged this way.
 */
export function checkLostMarkers(log: BeyondTheLog): void {
  const lost = (why: string) =>
    new StorageCorrupted(
      `${MAIN_FILE} line ${log.markers + 1}: confirmed commit markers are missing: the file ends at seq ${log.lastSeq}, but ${why}`,
      { file: MAIN_FILE, line: log.markers + 1 },
    );
  const rewritten = log.rewritten[0];
  if (rewritten !== undefined)
    throw lost(
      `${where(rewritten)} starts with a base of seq ${rewritten.seq}, and a file is rewritten to start at a base only after that base's marker is in ${MAIN_FILE}`,
    );
  const calls = new Map<number, UnconfirmedRecord>();
  for (const record of log.unconfirmed)
    if (record.call !== undefined && !calls.has(record.call)) calls.set(record.call, record);
  const found = [...calls.entries()].sort((a, b) => a[0] - b[0]);
  const seen = (list: typeof found) =>
    list.map(([call, record]) => `the call from seq ${call} (${where(record)})`).join(", ");
  if (found.length > 1)
    throw lost(
      `records of ${found.length} commit calls lie beyond it: ${seen(found.slice(0, 5))}${found.length > 5 ? ", …" : ""}; only the last call can leave records without markers`,
    );
  const only = found[0];
  if (only === undefined) return;
  const [call, record] = only;
  if (call > log.lastSeq + 1)
    throw lost(
      `${where(record)} is a record of the call from seq ${call}, so the markers of seqs ${log.lastSeq + 1} to ${call - 1} were written before it`,
    );
  if (call < log.highestConfirmedCall)
    throw lost(
      `${where(record)} is an unconfirmed record of the call from seq ${call}, older than the confirmed call from seq ${log.highestConfirmedCall}`,
    );
}
