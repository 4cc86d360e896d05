/** Rules the crash suite checks; each failure message starts with one, so an adapter author knows what broke. */
export type CrashRule =
  | "acknowledged commits survive"
  | "no commit is half present"
  | "what survives is a prefix of the commits"
  | "seqs strictly increase"
  | "ids are never reused"
  | "reopen sees the committed state"
  | "the storage keeps working after a crash"
  | "corruption is reported, never guessed around"
  | "a failed syscall reaches the writer"
  | "single owner"
  | "harness";

/** A crash-conformance check that did not hold. */
export class CrashCheckFailed extends Error {
  override readonly name = "CrashCheckFailed";
  constructor(
    readonly rule: CrashRule,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${rule}: ${detail}`, options);
  }
}

export function check(
  condition: boolean,
  rule: CrashRule,
  detail: () => string,
): asserts condition {
  if (!condition) throw new CrashCheckFailed(rule, detail());
}

export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return `${error.name}${typeof code === "string" ? ` (${code})` : ""}: ${error.message}`;
  }
  return String(error);
}

/** The same failure with what is needed to replay the run (seed, iteration) added to its message. */
export function withReplay(error: unknown, context: string): CrashCheckFailed {
  if (error instanceof CrashCheckFailed)
    return new CrashCheckFailed(error.rule, `${error.detail}\n  ${context}`, {
      cause: error.cause ?? error,
    });
  return new CrashCheckFailed("harness", `${describeError(error)}\n  ${context}`, { cause: error });
}
