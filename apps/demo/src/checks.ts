import type { Output } from "./render/output.js";

/**
 * Every claim the demo prints goes through here: it is evaluated by the
 * program, printed with its verdict, and a single failed claim makes the
 * process exit non-zero. Nothing is asserted only in prose.
 */
export class Checks {
  readonly #out: Output;
  #failed: string[] = [];
  #passed = 0;

  constructor(out: Output) {
    this.#out = out;
  }

  /** Prints `claim` as holding or not; `detail` explains a failure (what was expected, what was seen). */
  claim(claim: string, holds: boolean, detail?: string): boolean {
    const { style } = this.#out;
    if (holds) {
      this.#passed += 1;
      this.#out.line(`  ${style.green("✓")} ${claim}`);
    } else {
      this.#failed.push(claim);
      this.#out.line(`  ${style.red("✗")} ${style.red(claim)}`);
      if (detail !== undefined) {
        for (const line of detail.split("\n")) this.#out.line(`      ${line}`);
      }
    }
    return holds;
  }

  /** A claim that two JSON-shaped values are equal, showing both when they are not. */
  same(claim: string, actual: unknown, expected: unknown): boolean {
    const a = stableJson(actual);
    const e = stableJson(expected);
    return this.claim(claim, a === e, `expected ${e}\n     got ${a}`);
  }

  get failed(): readonly string[] {
    return this.#failed;
  }

  get passed(): number {
    return this.#passed;
  }
}

/** JSON with object keys sorted, so equal values always print (and compare) the same. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
          a < b ? -1 : a > b ? 1 : 0,
        ),
      );
    }
    return v;
  });
}
