import { StorageCorrupted } from "@durably/core";
import type { AppendHandles } from "./append-handles.js";
import type { FileSystem } from "./file-system.js";
import type { JsonlDocument, JsonlIndex } from "./jsonl-index.js";
import { documentFile } from "./line-format.js";

export interface ReclaimContext {
  fs: FileSystem;
  directory: string;
  state: JsonlIndex;
  handles: AppendHandles;
  fsync: boolean;
}

/**
 * Whether a current-only document's file is worth rewriting: it starts
 * with revisions older than the newest base, and those obsolete bytes are
 * at least as many as the live ones. Rewriting only then keeps the cost of
 * rewrites proportional to the bytes appended (each rewrite at least halves
 * the file), however often bases arrive.
 */
export function worthRewriting(state: JsonlIndex, doc: JsonlDocument): boolean {
  if (!doc.currentOnly || doc.record.retiredAt !== undefined) return false;
  const first = doc.revisions[0];
  const extent = state.files.get(documentFile(doc.record.id));
  if (first === undefined || extent === undefined || first.offset === 0) return false;
  return first.offset >= extent.size - first.offset;
}

/**
 * Rewrites a current-only document's sidecar to hold only its newest base
 * and later deltas: temp file (flushed with fsync), then an atomic rename
 * over the old file (then the directory flushed). Runs only after the
 * marker of that base is in main.jsonl (flushed with fsync), so a crash at
 * any point leaves either file, and recovery accepts both.
 */
export async function rewriteDocument(ctx: ReclaimContext, doc: JsonlDocument): Promise<void> {
  const { fs, directory, state } = ctx;
  const first = doc.revisions[0];
  const extent = state.files.get(documentFile(doc.record.id));
  if (first === undefined || extent === undefined) return;
  const file = documentFile(doc.record.id);
  const path = `${directory}/${file}`;
  const temp = `${path}.tmp`;
  const length = extent.size - first.offset;
  const kept = await fs.read(path, { offset: first.offset, length });
  if (kept === undefined || kept.length !== length)
    throw new StorageCorrupted(`${file} is shorter than its confirmed ${extent.size} bytes`, {
      file,
    });
  await fs.write(temp, kept);
  if (ctx.fsync) await fs.flush(temp);
  await ctx.handles.drop(file);
  await fs.rename(temp, path);
  if (ctx.fsync) await fs.flush(directory);
  const cut = first.offset;
  const cutLines = first.line - 1;
  for (const revision of doc.revisions) {
    revision.offset -= cut;
    revision.line -= cutLines;
  }
  state.files.set(file, { size: extent.size - cut, lines: extent.lines - cutLines });
}

/** Removes a sidecar whose every record is obsolete (retired current-only document, terminal task). */
export async function removeSidecar(ctx: ReclaimContext, file: string): Promise<void> {
  if (!ctx.state.files.has(file)) return;
  await ctx.handles.drop(file);
  await ctx.fs.remove(`${ctx.directory}/${file}`);
  if (ctx.fsync) await ctx.fs.flush(ctx.directory);
  ctx.state.files.delete(file);
}
