import type { FileSystem } from "./file-system.js";
import { LineCursor } from "./line-cursor.js";

/** Bytes asked of the file system per read while streaming a file. */
export const READ_CHUNK = 1 << 20;

/**
 * Reads in flight for the file being streamed, once its first chunk came
 * back full. A range read through the port is several steps (open, stat,
 * read, close), and each step waits for the parser to pause: with one read
 * ahead, every window waited for the last steps of the next read; with a
 * few, they are done by then.
 */
export const READS_AHEAD = 4;

const EMPTY = Buffer.alloc(0);
const NEWLINE = 10;

/**
 * Streams the complete lines of one file through the `FileSystem` port's
 * range reads, a window at a time, so no file is ever held whole: memory
 * is one window (a chunk plus the unfinished line carried over) and up to
 * `READS_AHEAD` chunks being read meanwhile. Every read is one chunk at the
 * next offset; a line longer than a chunk is gathered from as many chunks
 * as it spans and joined once, so it costs linear time however long it is;
 * other lines are read in place, in the chunk that holds them.
 *
 * The first chunk is asked for when the reader is made, so making readers
 * for the next few files reads them ahead; the next chunks are asked for
 * once the first came back full (a small file costs one read).
 *
 *   const lines = new FileLines(fs, path);
 *   for (let w = await lines.next(); w; w = await lines.next()) while (w.next()) use(w.text());
 *   lines.end   // where an unterminated final line starts
 *   lines.size  // bytes in the file
 */
export class FileLines {
  /** Reads asked for and not yet taken, at consecutive offsets. */
  private readonly reads: Promise<Uint8Array | undefined>[] = [];
  /** File offset of the next read to ask for. */
  private asked = 0;
  /** Bytes taken from reads so far. */
  private offset = 0;
  /** Set once a read came back short or found no file: the end, no more reads. */
  private done = false;
  /** Bytes of an unfinished line carried into the next window, and its file offset and line number. */
  private carry: Buffer = EMPTY;
  /** Whole chunks of a line longer than a chunk, joined once its end arrives. */
  private parts: Buffer[] = [];
  private base = 0;
  private line = 1;
  private window: { bytes: Buffer; end: number; cursor: LineCursor } | undefined;
  /** The rest of the chunk that finished a joined line, once that line's window is read. */
  private rest: Buffer | undefined;
  /** False once the first read found no file. */
  exists = true;

  constructor(
    private readonly fs: FileSystem,
    readonly path: string,
    private readonly chunk = READ_CHUNK,
  ) {
    this.ask();
  }

  private ask(): void {
    const read = this.fs.read(this.path, { offset: this.asked, length: this.chunk });
    // Handled here too, so a read left in flight when the caller stops early is no unhandled rejection.
    read.catch(() => undefined);
    this.reads.push(read);
    this.asked += this.chunk;
  }

  /**
   * The next window of complete lines (a cursor numbered and offset as in
   * the file), or undefined at the end of the file. Read each window before
   * asking for the next; stopping early is fine.
   *
   * No chunk is copied: the line a chunk finishes (begun in earlier chunks)
   * is joined alone into a window of its own, and the chunk's later lines
   * are the next window, a view of the chunk.
   */
  async next(): Promise<LineCursor | undefined> {
    if (this.window !== undefined) {
      const { bytes, end, cursor } = this.window;
      while (cursor.next()); // a window left half read is finished here, for the line count
      this.carry = bytes.subarray(end);
      this.base += end;
      this.line = cursor.line + 1;
      this.window = undefined;
    }
    if (this.rest !== undefined) {
      // What follows a joined line, in the chunk that finished it (the carry is empty here).
      const rest = this.rest;
      this.rest = undefined;
      const newline = rest.lastIndexOf(NEWLINE);
      if (newline >= 0) return this.open(rest, newline + 1);
      this.carry = rest;
    }
    while (!this.done) {
      const read = await (this.reads.shift() as Promise<Uint8Array | undefined>);
      if (read === undefined) {
        if (this.offset === 0) this.exists = false;
        this.done = true;
        // Gone after a read (removed meanwhile): what was read of a long line stays the tail.
        if (this.parts.length > 0) this.carry = Buffer.concat([this.carry, ...this.parts]);
        this.parts = [];
        break;
      }
      const bytes = toBuffer(read);
      this.offset += bytes.length;
      // Fewer bytes than asked: the end of the file (a range past the end returns what exists).
      if (bytes.length < this.chunk) this.done = true;
      else while (this.reads.length < READS_AHEAD) this.ask();
      const first = bytes.indexOf(NEWLINE);
      if (first < 0) {
        if (!this.done) {
          this.parts.push(bytes);
          continue;
        }
        // The unterminated final line.
        this.carry = Buffer.concat([this.carry, ...this.parts, bytes]);
        this.parts = [];
        break;
      }
      if (this.carry.length === 0 && this.parts.length === 0)
        return this.open(bytes, bytes.lastIndexOf(NEWLINE) + 1);
      const joined = Buffer.concat([this.carry, ...this.parts, bytes.subarray(0, first + 1)]);
      this.parts = [];
      this.carry = EMPTY;
      this.rest = bytes.subarray(first + 1);
      return this.open(joined, joined.length);
    }
    return undefined;
  }

  /** Makes `bytes` (complete lines up to `end`, then the start of an unfinished one) the window. */
  private open(bytes: Buffer, end: number): LineCursor {
    const cursor = new LineCursor(bytes, this.base, this.line);
    this.window = { bytes, end, cursor };
    return cursor;
  }

  /** Once `next()` returned undefined: the file offset just past the last complete line. */
  get end(): number {
    return this.base + (this.window?.end ?? 0);
  }

  /** Once `next()` returned undefined: the bytes in the file. */
  get size(): number {
    return this.offset;
  }

  /** Once `next()` returned undefined: the unterminated final line's bytes (empty when the file ends with `\n`). */
  get tail(): Buffer {
    return this.window === undefined ? this.carry : this.window.bytes.subarray(this.window.end);
  }
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}
