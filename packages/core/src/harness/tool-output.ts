import { refuseUnknownFields, setFields } from "../domain/option-keys.js";
/** How much of a tool's streamed output its live slot keeps (the newest part). */
export interface ToolOutputBound {
  /** UTF-8 bytes kept (default 51,200: 50 KiB). */
  maxBytes?: number;
  /** Lines kept (default 2,000). */
  maxLines?: number;
}

export const DEFAULT_OUTPUT_BOUND: Required<ToolOutputBound> = {
  maxBytes: 50 * 1024,
  maxLines: 2_000,
};

/** What was cut from the front of a slot's output to keep it within the bound. */
export type OutputCut = {
  /** UTF-8 bytes cut. */
  bytes: number;
  /** Line breaks cut (a line cut in the middle counts once its end is cut too). */
  lines: number;
  /** UTF-16 code units cut, so that a reader can tell where `output` starts in the whole stream. */
  chars: number;
};

/** Checks `settings.toolOutput`, filling in defaults; a `TypeError` names the bad field. */
export function outputBound(settings: unknown): Required<ToolOutputBound> {
  if (settings === undefined) return DEFAULT_OUTPUT_BOUND;
  if (typeof settings !== "object" || settings === null || Array.isArray(settings))
    throw new TypeError("Harness.open: settings.toolOutput: must be { maxBytes?, maxLines? }");
  const s = settings as Record<string, unknown>;
  const where = "Harness.open: settings.toolOutput";
  refuseUnknownFields(s, ["maxBytes", "maxLines"], where, "a tool output setting");
  const bound = { ...DEFAULT_OUTPUT_BOUND, ...setFields(s as ToolOutputBound) };
  for (const key of ["maxBytes", "maxLines"] as const)
    if (!Number.isSafeInteger(bound[key]) || bound[key] < 1)
      throw new TypeError(`${where}.${key}: must be a positive integer`);
  return bound;
}

/** UTF-8 length of a string (lone surrogates count as the 3 bytes of U+FFFD, as TextEncoder writes them). */
export function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** The index where the last `maxBytes` UTF-8 bytes of `text` start (never inside a surrogate pair). */
function tailStart(text: string, maxBytes: number): number {
  let bytes = 0;
  let i = text.length;
  while (i > 0) {
    const c = text.charCodeAt(i - 1);
    let step = 1;
    let size = c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    if (c >= 0xdc00 && c <= 0xdfff && i >= 2) {
      const h = text.charCodeAt(i - 2);
      if (h >= 0xd800 && h <= 0xdbff) {
        step = 2;
        size = 4;
      }
    }
    if (bytes + size > maxBytes) break;
    bytes += size;
    i -= step;
  }
  return i;
}

/**
 * Appends `text` to a slot's output and cuts the oldest part so that at
 * most `maxLines` lines and `maxBytes` bytes stay: whole lines first; a
 * last line longer than `maxBytes` is cut inside (at a code point). Returns
 * the new output and the cut so far (`undefined` while nothing was cut).
 */
export function appendBounded(
  output: string,
  cut: OutputCut | undefined,
  text: string,
  bound: Required<ToolOutputBound>,
): { output: string; cut: OutputCut | undefined } {
  const whole = output + text;
  const lines = countLines(whole) + (whole.endsWith("\n") || whole === "" ? 0 : 1);
  if (lines <= bound.maxLines && whole.length <= bound.maxBytes / 3) return { output: whole, cut };
  let from = 0;
  if (lines > bound.maxLines) {
    // Skip past the first (lines - maxLines) line breaks.
    for (let skip = lines - bound.maxLines; skip > 0; skip--) from = whole.indexOf("\n", from) + 1;
  }
  if (utf8Length(whole.slice(from)) > bound.maxBytes) {
    const inside = from + tailStart(whole.slice(from), bound.maxBytes);
    // Keep whole lines when the kept bytes hold a line start; else cut inside the (long) last line.
    const atLineStart = inside === 0 || whole[inside - 1] === "\n";
    const next = atLineStart ? inside - 1 : whole.indexOf("\n", inside);
    from = next !== -1 && next + 1 < whole.length ? next + 1 : inside;
  }
  if (from === 0) return { output: whole, cut };
  const removed = whole.slice(0, from);
  return {
    output: whole.slice(from),
    cut: {
      bytes: (cut?.bytes ?? 0) + utf8Length(removed),
      lines: (cut?.lines ?? 0) + countLines(removed),
      chars: (cut?.chars ?? 0) + removed.length,
    },
  };
}

/** The output as shown to a reader: a marker line saying what was cut, then the kept part. */
export function boundedOutputText(output: string, cut: OutputCut | undefined): string {
  if (!cut) return output;
  return `[earlier output cut: ${cut.lines} line${cut.lines === 1 ? "" : "s"}, ${cut.bytes} bytes]\n${output}`;
}
