import type { CompactionPolicy } from "./generation-task.js";
import { checkThreshold } from "./models.js";

/** `settings.compaction`: automatic compaction of long conversations. */
export interface CompactionSettings {
  /** Compact automatically (past the threshold, and once after an overflow). Default true. */
  auto?: boolean;
  /** The fraction of a model's `contextWindow` past which the last request triggers it. Default 0.8. */
  threshold?: number;
  /** Turns (a user message and what answered it) an automatic compaction keeps as they are. Default 2. */
  keepLastTurns?: number;
}

export const DEFAULT_COMPACTION: CompactionPolicy = {
  auto: true,
  threshold: 0.8,
  keepLastTurns: 2,
};

/** Checks a `keepLastTurns`: at least one turn stays (the summary needs something to lead into). */
export function checkKeepLastTurns(value: unknown, where: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1)
    throw new TypeError(`${where}: must be an integer of at least 1`);
  return value as number;
}

/** Checks `settings.compaction`, filling in defaults; a `TypeError` names the bad field. */
export function compactionPolicy(settings: unknown): CompactionPolicy {
  if (settings === undefined) return DEFAULT_COMPACTION;
  if (typeof settings !== "object" || settings === null || Array.isArray(settings))
    throw new TypeError("settings.compaction: must be { auto?, threshold?, keepLastTurns? }");
  const s = settings as Record<string, unknown>;
  for (const key of Object.keys(s))
    if (!(key in DEFAULT_COMPACTION))
      throw new TypeError(
        `settings.compaction.${key}: not a compaction setting (auto, threshold, keepLastTurns)`,
      );
  if (s.auto !== undefined && typeof s.auto !== "boolean")
    throw new TypeError("settings.compaction.auto: must be true or false");
  return {
    auto: s.auto ?? DEFAULT_COMPACTION.auto,
    threshold:
      s.threshold === undefined
        ? DEFAULT_COMPACTION.threshold
        : checkThreshold(s.threshold, "settings.compaction.threshold"),
    keepLastTurns:
      s.keepLastTurns === undefined
        ? DEFAULT_COMPACTION.keepLastTurns
        : checkKeepLastTurns(s.keepLastTurns, "settings.compaction.keepLastTurns"),
  };
}
