import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The monorepo root: the nearest ancestor of this file holding pnpm-workspace.yaml. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "pnpm-workspace.yaml"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error("pnpm-workspace.yaml not found above " + import.meta.url);
    dir = parent;
  }
}

/** A scratch directory on the real disk (TMPDIR honoured), removed by `dispose`. */
export class Scratch {
  readonly root = mkdtempSync(join(tmpdir(), "durably-bench-"));
  private count = 0;

  /** A fresh path inside the scratch directory (not created). */
  path(name: string): string {
    return join(this.root, `${this.count++}-${name}`);
  }

  dispose(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** Bytes of a file, or of every file below a directory; 0 when missing. */
export function bytesOnDisk(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.size;
  let total = 0;
  for (const name of readdirSync(path)) total += bytesOnDisk(join(path, name));
  return total;
}

/** A SQLite database with its WAL and shared-memory files, as it sits on disk right now. */
export function sqliteBytes(file: string): number {
  return bytesOnDisk(file) + bytesOnDisk(`${file}-wal`) + bytesOnDisk(`${file}-shm`);
}
