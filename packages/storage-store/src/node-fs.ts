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
  isDirectory(): boolean;
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
  realpathSync: { native(path: string): string };
  mkdirSync(path: string): void;
  linkSync(existing: string, created: string): void;
  copyFileSync(from: string, to: string): void;
  unlinkSync(path: string): void;
  rmdirSync(path: string): void;
}

/** The `node:path` functions the package uses. */
export interface SyncPath {
  readonly sep: string;
  isAbsolute(path: string): boolean;
  join(...parts: string[]): string;
  resolve(...parts: string[]): string;
  dirname(path: string): string;
  basename(path: string): string;
}

interface NodeProcess {
  getBuiltinModule?: (id: string) => unknown;
  cwd(): string;
  pid: number;
}

/** This process, where there is one (not in a browser). */
export function nodeProcess(): NodeProcess | undefined {
  return (globalThis as { process?: NodeProcess }).process;
}

export function nodeFs(): SyncFs | undefined {
  return nodeProcess()?.getBuiltinModule?.("node:fs") as SyncFs | undefined;
}

export function nodePath(): SyncPath | undefined {
  return nodeProcess()?.getBuiltinModule?.("node:path") as SyncPath | undefined;
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
