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

/**
 * Brings a written generation up to the commits stored since its capture
 * (run between commit calls, so nothing moves meanwhile): the markers
 * main.jsonl gained after the capture become the new tail, and the sidecar
 * records appended since are appended to the new generation's copies (or
 * copied into new files), byte for byte, so every marker still finds its
 * records by `(seq, ordinal)`. Each file touched and the directory are
 * flushed. Nothing of the old generation is changed.
 */
export async function catchUp(
  fs: FileSystem,
  from: string,
  to: string,
  taken: Capture & { mainSize: number },
  copied: ReadonlyMap<string, CopiedFile>,
  state: JsonlIndex,
): Promise<CaughtUp> {
  const mainNow = (await fs.stat(`${from}/${MAIN_FILE}`))?.size ?? 0;
  if (mainNow > taken.mainSize) {
    const out = await fs.openAppend(`${to}/${MAIN_FILE}`);
    try {
      await copyRange(fs, `${from}/${MAIN_FILE}`, out, taken.mainSize, mainNow);
      await out.flush();
    } finally {
      await out.close();
    }
  }
  const shifts = new Map<string, { cut: number; cutLines: number }>();
  const files = new Map<string, FileExtent>();
  for (const [file, now] of state.files) {
    const done = copied.get(file);
    const at = done
      ? {
          size: done.cut + done.size,
          lines: done.cutLines + done.lines,
          cut: done.cut,
          cutLines: done.cutLines,
        }
      : (() => {
          const then = taken.files.get(file);
          return {
            size: then?.size ?? 0,
            lines: then?.lines ?? 0,
            cut: then?.size ?? 0,
            cutLines: then?.lines ?? 0,
          };
        })();
    // Nothing kept and nothing new: a file whose records are all obsolete (terminal task, retired document).
    if (done === undefined && now.size === at.size) continue;
    if (now.size < at.size)
      throw new StorageCorrupted(
        `${file} shrank from ${at.size} to ${now.size} bytes during a compaction`,
        { file },
      );
    const out = await fs.openAppend(`${to}/${file}`);
    try {
      await copyRange(fs, `${from}/${file}`, out, at.size, now.size);
      await out.flush();
    } finally {
      await out.close();
    }
    shifts.set(file, { cut: at.cut, cutLines: at.cutLines });
    files.set(file, { size: now.size - at.cut, lines: now.lines - at.cutLines });
  }
  // Every revision the index may read must be in the new generation before the switch.
  for (const doc of state.documents.values())
    if (doc.revisions.length > 0 && !shifts.has(documentFile(doc.record.id)))
      throw new StorageCorrupted(
        `document ${doc.record.id} keeps revisions, but its file was not carried into the new generation`,
        { file: documentFile(doc.record.id) },
      );
  await fs.flush(to);
  return { shifts, files };
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
