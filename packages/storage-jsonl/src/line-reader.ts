import type { FileSystem } from "./file-system.js";
import { LineCursor } from "./line-cursor.js";

/** Bytes asked of the file system per read while streaming a file. */
export const READ_CHUNK = 1 << 20;

const EMPTY = Buffer.alloc(0);
const NEWLINE = 10;

/**
 * Streams the complete lines of one file through the `FileSystem` port's
 * range reads, a window at a time, so no file is ever held whole: memory
 * is one window (a chunk plus the unfinished line carried over) and the
 * next chunk, which is read while the current one is parsed. A line longer
 * than a chunk grows the reads (doubling) until it fits, so it costs linear
 * time however long it is.
 *
 * The first chunk is asked for when the reader is made, so making readers
 * for the next few files reads them ahead.
 *
 *   const lines = new FileLines(fs, path);
 *   for (let w = await lines.next(); w; w = await lines.next()) while (w.next()) use(w.text());
 *   lines.end   // where an unterminated final line starts
 *   lines.size  // bytes in the file
 */
export class FileLines {
  private pending: Promise<Uint8Array | undefined> | undefined;
  private asked: number;
  /** File offset of the next read. */
  private offset = 0;
  /** Bytes of an unfinished line carried into the next window, and its file offset and line number. */
  private carry: Buffer = EMPTY;
  private base = 0;
  private line = 1;
  private window: { bytes: Buffer; end: number; cursor: LineCursor } | undefined;
  /** False once the first read found no file. */
  exists = true;

  constructor(
    private readonly fs: FileSystem,
    readonly path: string,
    private readonly chunk = READ_CHUNK,
  ) {
    this.asked = chunk;
    this.pending = this.read();
  }

  private read(): Promise<Uint8Array | undefined> {
    const read = this.fs.read(this.path, { offset: this.offset, length: this.asked });
    // Handled here too, so a read left in flight when the caller stops early is no unhandled rejection.
    read.catch(() => undefined);
    return read;
  }

  /**
   * The next window of complete lines (a cursor numbered and offset as in
   * the file), or undefined at the end of the file. Read each window before
   * asking for the next; stopping early is fine.
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
    while (this.pending !== undefined) {
      const bytes = await this.pending;
      this.pending = undefined;
      if (bytes === undefined) {
        if (this.offset === 0) this.exists = false;
        break;
      }
      this.offset += bytes.length;
      const buffer = this.carry.length === 0 ? toBuffer(bytes) : Buffer.concat([this.carry, bytes]);
      const end = buffer.lastIndexOf(NEWLINE) + 1;
      // Fewer bytes than asked: the end of the file (a range past the end returns what exists).
      if (bytes.length >= this.asked) {
        this.asked = end > 0 ? this.chunk : Math.max(this.chunk, buffer.length);
        this.pending = this.read();
      }
      if (end === 0) {
        this.carry = buffer;
        continue;
      }
      const cursor = new LineCursor(buffer, this.base, this.line);
      this.window = { bytes: buffer, end, cursor };
      return cursor;
    }
    return undefined;
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
