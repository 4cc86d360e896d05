import type { EntryId, Seq } from "../domain/ids.js";
import type { ConversationRecord } from "../domain/records.js";
import type { Storage } from "../storage/port.js";
import type { DocCache } from "./doc-cache.js";
import type { OverlayView } from "./overlay.js";
import type { ValueLimits } from "./value-size.js";

/** What a transaction needs from its session (kept narrow so the transaction is testable on its own terms). */
export interface Kernel {
  readonly storage: Storage;
  readonly overlay: OverlayView;
  readonly docs: DocCache;
  /** The size limits values written into a transaction must meet. */
  readonly limits: ValueLimits;
  /** Throws `SessionFailed` / `SessionClosed` when the session cannot take work. */
  check(): void;
  /**
   * A fresh id from storage. Throws at once when the session cannot take
   * work; a rejection must go through `mintFailed`.
   */
  mintId(): Promise<number>;
  /** A failed `storage.mintId` means storage is broken: fails the session and throws `SessionFailed`. */
  readonly mintFailed: (error: unknown) => never;
  /** Stored conversations are immutable, so the session remembers the ones it has seen. */
  knownConversation(id: number): ConversationRecord | undefined;
  rememberConversation(record: ConversationRecord): void;
  /** The seq of the commit that wrote an entry, waiting for a prepared commit to be stored when needed. */
  entrySeq(id: EntryId): Promise<Seq | undefined>;
}
