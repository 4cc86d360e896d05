import { ByteReader } from "./bytes.js";

/**
 * The state a LevelDB MANIFEST describes, replayed from its version edits
 * (LevelDB's `VersionEdit` encoding): the live table files with their sizes,
 * and the oldest write-ahead log LevelDB still replays.
 */
export interface ManifestState {
  /** Live table file number -> size in bytes. */
  tables: Map<number, number>;
  /** Logs numbered at or above this are replayed at open. */
  logNumber: number;
  /** An older log still replayed (0: none). */
  prevLogNumber: number;
  /**
   * The next file number LevelDB allocates: the number of the MANIFEST its
   * next open writes (0 when no edit records it).
   */
  nextFile: number;
  /** The sequence number of the newest write the tables hold (0: none ever recorded). */
  lastSequence: number;
}

const COMPARATOR = 1;
const LOG_NUMBER = 2;
const NEXT_FILE_NUMBER = 3;
const LAST_SEQUENCE = 4;
const COMPACT_POINTER = 5;
const DELETED_FILE = 6;
const NEW_FILE = 7;
const PREV_LOG_NUMBER = 9;

/** Replays `edits` (the MANIFEST's records); a malformed edit throws `RangeError` naming its index. */
export function replayManifest(edits: readonly Uint8Array[]): ManifestState {
  const state: ManifestState = {
    tables: new Map(),
    logNumber: 0,
    prevLogNumber: 0,
    nextFile: 0,
    lastSequence: 0,
  };
  edits.forEach((edit, index) => {
    const r = new ByteReader(edit);
    try {
      while (!r.done) {
        const tag = r.varint();
        switch (tag) {
          case COMPARATOR:
            r.prefixed();
            break;
          case LOG_NUMBER:
            state.logNumber = r.varint();
            break;
          case PREV_LOG_NUMBER:
            state.prevLogNumber = r.varint();
            break;
          case NEXT_FILE_NUMBER:
            state.nextFile = r.varint();
            break;
          case LAST_SEQUENCE:
            state.lastSequence = r.varint();
            break;
          case COMPACT_POINTER:
            r.varint();
            r.prefixed();
            break;
          case DELETED_FILE:
            r.varint();
            state.tables.delete(r.varint());
            break;
          case NEW_FILE: {
            r.varint();
            const number = r.varint();
            const size = r.varint();
            r.prefixed();
            r.prefixed();
            state.tables.set(number, size);
            break;
          }
          default:
            throw new RangeError(`unknown tag ${tag}`);
        }
      }
    } catch (error) {
      throw new RangeError(`version edit ${index}: ${(error as Error).message}`, { cause: error });
    }
  });
  return state;
}
