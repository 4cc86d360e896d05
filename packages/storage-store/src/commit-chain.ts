import { StorageCorrupted } from "@durably/core";
import { decode, isId } from "./codec.js";
import { checksum, unframe } from "./framing.js";
import type { KeyValueStore } from "./key-value-store.js";
import { K, prefixEnd, trailingNumber } from "./keys.js";

/**
 * The commit chain (README "Commit chain"). Every commit call's atomic
 * write carries one marker `l/<first seq>` -> `{"to":<last seq>,"prev":<link>}`
 * where `<link>` is the checksum field of the previous marker, and
 * `m/counters` names the last seq and the newest marker's checksum.
 *
 * A store can lose a write from the middle while keeping later ones: LevelDB
 * skips a damaged log record when it replays its log at open, and keeps the
 * records after it. The markers of the lost writes are then missing between
 * markers that survived, which `verifyChain` reports at open. Markers at or
 * below `verified` (the last seq a previous open verified) are not read
 * again: a LevelDB open replays every log into tables, so a later log
 * damage can only drop writes made after it.
 */

/** The link of the first marker, which has no previous one. */
export const CHAIN_START = "00000000";

export interface Counters {
  /** The last stored seq. */
  seq: number;
  /** Id high-water mark: every committed record id and every id minted before the write is at or below it. */
  ids: number;
  /** The last seq an open verified the chain up to: the next open starts there. */
  verified: number;
  /** Checksum field of the marker of the last write (`CHAIN_START` before the first). */
  link: string;
}

export function countersPayload(c: Counters): string {
  return `{"seq":${c.seq},"ids":${c.ids},"verified":${c.verified},"link":"${c.link}"}`;
}

const LINK = /^[0-9a-f]{8}$/;

export function decodeCounters(raw: string): Counters {
  const c = decode(K.counters, raw) as Partial<Counters> | null;
  if (
    typeof c !== "object" ||
    c === null ||
    !isId(c.seq) ||
    !(c.ids === 0 || isId(c.ids)) ||
    !(c.verified === 0 || isId(c.verified)) ||
    c.verified > c.seq ||
    typeof c.link !== "string" ||
    !LINK.test(c.link)
  )
    throw new StorageCorrupted(`key ${K.counters}: not { seq, ids, verified, link }: ${raw}`, {
      key: K.counters,
    });
  return c as Counters;
}

/** The marker of a write storing seqs `first..last`, chained to the previous write's `link`; returns the put and its own link. */
export function marker(
  first: number,
  last: number,
  link: string,
): { key: string; payload: string; link: string } {
  const key = K.marker(first);
  const payload = `{"to":${last},"prev":"${link}"}`;
  return { key, payload, link: checksum(key, payload) };
}

interface Marker {
  key: string;
  first: number;
  to: number;
  prev: string;
  link: string;
}

/** The exact form `marker` writes; matched rather than parsed, since open reads every marker since the last verified one. */
const MARKER = /^\{"to":(\d{1,16}),"prev":"([0-9a-f]{8})"\}$/;

/** A marker's payload `{"to":<last seq>,"prev":<link>}` stored under `key`; anything else is `StorageCorrupted`. */
export function readMarkerPayload(key: string, payload: string): { to: number; prev: string } {
  const first = trailingNumber(key);
  const match = MARKER.exec(payload);
  const to = Number(match?.[1]);
  if (first === undefined || match === null || !isId(to) || to < first)
    throw new StorageCorrupted(`key ${key}: not a commit marker { to, prev }: ${payload}`, {
      key,
    });
  return { to, prev: match[2] as string };
}

function readMarker(key: string, raw: string): Marker {
  const { to, prev } = readMarkerPayload(key, unframe(key, raw));
  return { key, first: trailingNumber(key) as number, to, prev, link: raw.slice(0, 8) };
}

/**
 * Checks the markers after `counters.verified`: they must follow each other
 * with no gap in seqs, each linked to the one before, ending exactly at
 * `counters.seq` with the link `counters` names. Reads the raw store (the
 * chain needs each marker's checksum field) and changes nothing.
 */
export async function verifyChain(store: KeyValueStore, counters: Counters): Promise<void> {
  const { verified } = counters;
  let expected = verified + 1;
  let link = CHAIN_START;
  if (verified > 0) {
    // The anchor: the marker of the write that stored seq `verified`.
    let anchor: Marker | undefined;
    for await (const [key, raw] of store.range({
      gte: K.markers,
      lt: K.marker(verified + 1),
      reverse: true,
      limit: 1,
    }))
      anchor = readMarker(key, raw);
    if (anchor === undefined || anchor.to !== verified)
      throw new StorageCorrupted(
        `commit chain: no marker ends at seq ${verified}, which ${K.counters} says an earlier open verified (found ${anchor === undefined ? "none" : `${anchor.key} ending at seq ${anchor.to}`})`,
        { key: K.marker(verified), seq: verified },
      );
    link = anchor.link;
  }
  for await (const [key, raw] of store.range({
    gte: K.marker(expected),
    lt: prefixEnd(K.markers),
  })) {
    const m = readMarker(key, raw);
    if (m.first !== expected)
      throw new StorageCorrupted(
        m.first > expected
          ? `commit chain: the writes of seqs ${expected} to ${m.first - 1} are missing (no marker ${K.marker(expected)}) while the write of seq ${m.first} (${key}) is present: commits were lost from the middle`
          : `commit chain: marker ${key} overlaps the write before it, which ends at seq ${expected - 1}`,
        { key: K.marker(expected), seq: expected },
      );
    if (m.prev !== link)
      throw new StorageCorrupted(
        `commit chain: marker ${key} links to ${m.prev}, but the write before it has ${link}: the markers come from different histories`,
        { key, seq: m.first },
      );
    expected = m.to + 1;
    link = m.link;
  }
  const last = expected - 1;
  if (last !== counters.seq)
    throw new StorageCorrupted(
      last < counters.seq
        ? `commit chain: ${K.counters} says seq ${counters.seq} is stored, but the markers end at seq ${last}: the writes of seqs ${last + 1} to ${counters.seq} are missing`
        : `commit chain: markers go up to seq ${last}, beyond seq ${counters.seq} in ${K.counters}: the counters are stale`,
      { key: K.counters, seq: last + 1 },
    );
  if (link !== counters.link)
    throw new StorageCorrupted(
      `commit chain: ${K.counters} names the newest marker's checksum ${counters.link}, but it is ${link}`,
      { key: K.counters, seq: last },
    );
}
