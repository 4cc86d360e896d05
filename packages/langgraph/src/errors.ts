import { DurablyError } from "@durably/core";

/** A `RunnableConfig` (or argument) the saver cannot use: names the field and what was found. */
export class CheckpointConfigError extends DurablyError {
  override readonly name = "CheckpointConfigError";
  readonly code = "LANGGRAPH_BAD_CONFIG";
}

/** A value LangGraph's serializer produced that cannot be stored (e.g. a channel version that is not JSON). */
export class CheckpointValueError extends DurablyError {
  override readonly name = "CheckpointValueError";
  readonly code = "LANGGRAPH_BAD_VALUE";
}

/**
 * Stored checkpoint data does not have the shape this package writes, or a
 * reference inside it (a channel value's home entry) does not resolve. Never
 * guessed around: the message names the conversation, entry and field.
 */
export class CheckpointDataCorrupted extends DurablyError {
  override readonly name = "CheckpointDataCorrupted";
  readonly code = "LANGGRAPH_DATA_CORRUPTED";
}
