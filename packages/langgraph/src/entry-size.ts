import { jsonBytes, ValueTooLarge } from "@durably/core";
import type { ThreadAddress } from "./config.js";
import type { CheckpointEntryData } from "./entry-format.js";
import { CheckpointValueError } from "./errors.js";

/** How many of the largest inline channels the error names. */
const NAMED = 3;

/**
 * The typed error for a checkpoint whose entry is over core's limit per value
 * (`MAX_VALUE_BYTES`, 32 MiB, or the session's lower `limits.valueBytes`):
 * every inline channel value, the metadata and the checkpoint's other fields
 * share that one entry. Names the checkpoint and what takes the room.
 * Undefined when `error` is not that refusal.
 */
export function entryTooLarge(
  error: unknown,
  address: ThreadAddress,
  data: CheckpointEntryData,
): CheckpointValueError | undefined {
  if (!(error instanceof ValueTooLarge) || !error.where.startsWith("entry.data")) return undefined;
  const channels = Object.entries(data.stored)
    .flatMap(([channel, stored]) =>
      "value" in stored ? [{ channel, bytes: jsonBytes(stored.value) }] : [],
    )
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, NAMED)
    .map(({ channel, bytes }) => `${JSON.stringify(channel)} ${bytes} bytes`);
  return new CheckpointValueError(
    `put: checkpoint ${data.id} of thread ${JSON.stringify(address.threadId)} namespace ${JSON.stringify(address.ns)} is ${error.bytes} bytes of JSON text, over the limit of ${error.limit} bytes for one checkpoint entry (inline channel values, metadata and the checkpoint's other fields share it; bytes take a third more as base64); largest inline channels: ${channels.length > 0 ? channels.join(", ") : "none"}; metadata ${jsonBytes(data.metadata)} bytes; other fields ${jsonBytes(data.checkpoint)} bytes; nothing was stored`,
    { cause: error },
  );
}
