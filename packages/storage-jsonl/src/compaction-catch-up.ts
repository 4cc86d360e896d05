import { StorageCorrupted } from "@durably/core";
import type { AppendFile, FileSystem } from "./file-system.js";
import type { FileExtent, JsonlIndex } from "./jsonl-index.js";
import { documentFile, MAIN_FILE } from "./line-format.js";
import { READ_CHUNK } from "./line-reader.js";
import type { Capture, CopiedFile } from "./snapshot-writer.js";

/** Appends bytes `start`..`end` of `path` to `out`, a chunk at a time. */
export async function copyRange(
  fs: FileSystem,
  path: string,
  out: AppendFile,
  start: number,
  end: number,
): Promise<void> {
  for (let at = start; at < end;) {
    const bytes = await fs.read(path, { offset: at, length: Math.min(READ_CHUNK, end - at) });
    if (bytes === undefined || bytes.length === 0)
      throw new StorageCorrupted(`${path} ended at byte ${at}, before its confirmed ${end} bytes`, {
        file: path,
      });
    await out.append(bytes);
    at += bytes.length;
  }
}

/** Where each file of the new generation starts in the old one, and its extent there. */
export interface CaughtUp {
  /** Per sidecar: new positions are old ones minus `cut` bytes and `cutLines` lines. */
  shifts: Map<string, { cut: number; cutLines: number }>;
  files: Map<string, FileExtent>;
}

/** The old generation's confirmed sizes at one moment (taken between commit calls). */
export interface OldExtents {
  mainSize: number;
  files: ReadonlyMap<string, FileExtent>;
}

/** Takes `OldExtents` now: call between commit calls, so nothing is half written. */
export async function oldExtents(
  fs: FileSystem,
  from: string,
  state: JsonlIndex,
): Promise<OldExtents> {
  const mainSize = (await fs.stat(`${from}/${MAIN_FILE}`))?.size ?? 0;
  return { mainSize, files: new Map([...state.files].map(([file, e]) => [file, { ...e }])) };
}

/**
 * Brings a written generation up to the commits stored since its capture:
 * the markers main.jsonl gained become the new tail, and the sidecar
 * records appended are appended to the new generation's copies (or copied
 * into new files), byte for byte, so every marker still finds its records
 * by `(seq, ordinal)`. Incremental: `to(extents)` copies what lies between
 * the last call's extents and these (the old files only grow meanwhile:
 * reclamation waits for the compaction), so most of the copying runs while
 * commits go on, and the last call, between commit calls, copies only what
 * the last few commits added. Nothing of the old generation is changed.
 */
export class CatchUp {
  private mainSize: number;
  /** Files in the new generation: the old file's byte and line range `[cut, end)` copied so far. */
  private readonly copied = new Map<
    string,
    { cut: number; cutLines: number; end: number; endLines: number }
  >();
  /** Files not copied (yet): their extents at the capture. */
  private readonly skipped: Map<string, FileExtent>;

  constructor(
    private readonly fs: FileSystem,
    private readonly from: string,
    private readonly into: string,
    taken: Capture & { mainSize: number },
    written: ReadonlyMap<string, CopiedFile>,
  ) {
    this.mainSize = taken.mainSize;
    this.skipped = new Map(taken.files);
    for (const [file, c] of written) {
      this.copied.set(file, {
        cut: c.cut,
        cutLines: c.cutLines,
        end: c.cut + c.size,
        endLines: c.cutLines + c.lines,
      });
      this.skipped.delete(file);
    }
  }

  private async append(file: string, start: number, end: number, flush: boolean): Promise<void> {
    const out = await this.fs.openAppend(`${this.into}/${file}`);
    try {
      await copyRange(this.fs, `${this.from}/${file}`, out, start, end);
      if (flush) await out.flush();
    } finally {
      await out.close();
    }
  }

  /** Copies what the old generation gained up to `extents`; `flush`: each touched file and the directory. */
  async to(extents: OldExtents, flush: boolean): Promise<void> {
    if (extents.mainSize > this.mainSize) {
      await this.append(MAIN_FILE, this.mainSize, extents.mainSize, flush);
      this.mainSize = extents.mainSize;
    }
    for (const [file, now] of extents.files) {
      const done = this.copied.get(file);
      const at = done ?? this.skipped.get(file) ?? { size: 0, lines: 0 };
      const start = done ? done.end : (at as FileExtent).size;
      // Nothing kept and nothing new: a file whose records are all obsolete (terminal task, retired document).
      if (now.size === start) continue;
      if (now.size < start)
        throw new StorageCorrupted(
          `${file} shrank from ${start} to ${now.size} bytes during a compaction`,
          {
            file,
          },
        );
      await this.append(file, start, now.size, flush);
      if (done) {
        done.end = now.size;
        done.endLines = now.lines;
      } else {
        const from = at as FileExtent;
        this.copied.set(file, {
          cut: from.size,
          cutLines: from.lines,
          end: now.size,
          endLines: now.lines,
        });
        this.skipped.delete(file);
      }
    }
    if (flush) await this.fs.flush(this.into);
  }

  /**
   * Where each file the index knows sits in the new generation. Every
   * revision the index may read must be there: checked before the switch.
   */
  result(state: JsonlIndex): CaughtUp {
    const shifts = new Map<string, { cut: number; cutLines: number }>();
    const files = new Map<string, FileExtent>();
    for (const file of state.files.keys()) {
      const c = this.copied.get(file);
      if (c === undefined) continue;
      shifts.set(file, { cut: c.cut, cutLines: c.cutLines });
      files.set(file, { size: c.end - c.cut, lines: c.endLines - c.cutLines });
    }
    for (const doc of state.documents.values())
      if (doc.revisions.length > 0 && !shifts.has(documentFile(doc.record.id)))
        throw new StorageCorrupted(
          `document ${doc.record.id} keeps revisions, but its file was not carried into the new generation`,
          { file: documentFile(doc.record.id) },
        );
    return { shifts, files };
  }
}

/**
 * Moves the index onto the new generation's files: each kept revision's
 * position shifted by where its file's copy starts, every file's extent
 * replaced. New position objects, so a history read already under way
 * keeps the old ones (and reads the old files, which stay until it ends).
 */
export function moveIndex(state: JsonlIndex, caught: CaughtUp): void {
  for (const doc of state.documents.values()) {
    const shift = caught.shifts.get(documentFile(doc.record.id));
    if (shift === undefined) continue; // keeps no revision (checked by catchUp)
    doc.revisions = doc.revisions.map((r) => ({
      ...r,
      offset: r.offset - shift.cut,
      line: r.line - shift.cutLines,
    }));
  }
  state.files.clear();
  for (const [file, extent] of caught.files) state.files.set(file, extent);
}
