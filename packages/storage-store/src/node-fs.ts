/**
 * The synchronous `node:fs` functions the LevelDB directory checks use,
 * declared here so the package needs no Node types at runtime, and reached
 * through `process.getBuiltinModule` (Node 20.16+, 22.3+) so browser bundles
 * never import `node:fs`.
 */

export interface DirEnt {
  name: string;
  isFile(): boolean;
}

export interface Stats {
  size: number;
  ino: number;
  dev: number;
}

export interface SyncFs {
  readdirSync(path: string, options: { withFileTypes: true }): DirEnt[];
  readFileSync(path: string): Uint8Array;
  readFileSync(path: string, encoding: "utf8"): string;
  openSync(path: string, flags: string): number;
  readSync(
    fd: number,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
  ): number;
  fstatSync(fd: number): Stats;
  closeSync(fd: number): void;
  statSync(path: string): Stats;
  mkdirSync(path: string): void;
  linkSync(existing: string, created: string): void;
  copyFileSync(from: string, to: string): void;
  unlinkSync(path: string): void;
  rmdirSync(path: string): void;
}

export function nodeFs(): SyncFs | undefined {
  const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } })
    .process;
  return process?.getBuiltinModule?.("node:fs") as SyncFs | undefined;
}

/** The `code` of a Node system error (`ENOENT`, `EIO`...). */
export function errno(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

export function join(location: string, name: string): string {
  return location.endsWith("/") || location.endsWith("\\")
    ? location + name
    : `${location}/${name}`;
}
