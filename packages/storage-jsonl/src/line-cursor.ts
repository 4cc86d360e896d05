import { isAscii } from "node:buffer";

/**
 * Walks the complete lines of some bytes of a file (a whole small file, or
 * one window of a large one) without copying them: call `next()` until it
 * returns false, reading `text()`, `line`, `offset` and `length` in between.
 * Bytes that are all ASCII (the common case: most content is ASCII) are
 * decoded to one string once and each line is a slice of it; otherwise each
 * line is decoded on its own. After the last `next()`, `end` is where an
 * unterminated tail starts (the end of the bytes when they end with `\n`).
 */
export class LineCursor {
  readonly bytes: Buffer;
  private readonly ascii: string | undefined;
  /** Byte offset (in `bytes`) of the current line. */
  start = 0;
  /** 1-based number of the current line (0 before the first `next()`). */
  line: number;
  private nl = -1;

  constructor(
    bytes: Uint8Array,
    private readonly baseOffset = 0,
    baseLine = 1,
  ) {
    this.bytes = Buffer.isBuffer(bytes)
      ? bytes
      : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.ascii = isAscii(this.bytes) ? this.bytes.toString("latin1") : undefined;
    this.line = baseLine - 1;
  }

  /** Moves to the next complete line; false when none is left. */
  next(): boolean {
    const from = this.nl + 1;
    const nl = this.bytes.indexOf(10, from);
    if (nl < 0) return false;
    this.start = from;
    this.nl = nl;
    this.line++;
    return true;
  }

  /** The current line's text, without its `\n`. */
  text(): string {
    return this.ascii !== undefined
      ? this.ascii.slice(this.start, this.nl)
      : this.bytes.toString("utf8", this.start, this.nl);
  }

  /** Offset in `bytes` of the current line's `\n`. */
  get lineEnd(): number {
    return this.nl;
  }

  /** File offset of the current line. */
  get offset(): number {
    return this.baseOffset + this.start;
  }

  /** Bytes of the current line, its `\n` included. */
  get length(): number {
    return this.nl + 1 - this.start;
  }

  /** File offset just past the last complete line seen. */
  get end(): number {
    return this.baseOffset + this.nl + 1;
  }
}

/** One complete line of a file: its text (no `\n`), 1-based number and byte range. */
export interface RawLine {
  text: string;
  line: number;
  offset: number;
  length: number;
}

/**
 * Splits file bytes into complete lines plus the offset where an
 * unterminated tail starts (`bytes.length` when the file ends with `\n`).
 */
export function splitLines(
  bytes: Uint8Array,
  baseOffset = 0,
  baseLine = 1,
): { lines: RawLine[]; end: number } {
  const cursor = new LineCursor(bytes, baseOffset, baseLine);
  const lines: RawLine[] = [];
  while (cursor.next())
    lines.push({
      text: cursor.text(),
      line: cursor.line,
      offset: cursor.offset,
      length: cursor.length,
    });
  return { lines, end: cursor.end };
}
