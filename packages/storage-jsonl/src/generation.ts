import { StorageCorrupted, StorageVersionError, isPositiveSafeInteger } from "@durably/core";
import type { FileSystem } from "./file-system.js";
import { crc32Text } from "./line-checksum.js";
import { LineError, MAIN_FILE } from "./line-format.js";
import { SNAPSHOT_FILE, SNAPSHOT_FORMAT } from "./snapshot-format.js";

/**
 * Generations. A compaction writes the live state into a new directory
 * `gen-<n>/` (snapshot plus an empty tail) and then switches to it by
 * replacing the small pointer file `CURRENT` (temp file, flush, rename,
 * flush of the directory): the rename is the instant the new generation
 * becomes the storage. A directory without `CURRENT` is the layout of
 * earlier versions (format 1 and 2): `main.jsonl` and the sidecars at its
 * top, read as generation 0.
 */
export const POINTER_FILE = "CURRENT";
export const POINTER_TEMP = "CURRENT.tmp";
const POINTER_MAX = 4096;

export function generationDir(generation: number): string {
  return `gen-${generation}`;
}

export function parseGenerationDir(name: string): number | undefined {
  const match = /^gen-([1-9][0-9]{0,14})$/.exec(name);
  return match ? Number(match[1]) : undefined;
}

export function encodePointer(generation: number): string {
  const json = `{"format":${SNAPSHOT_FORMAT},"generation":${generation}}`;
  return `${json.slice(0, -1)},"crc":${crc32Text(json)}}\n`;
}

function decodePointer(text: string): number {
  if (!text.endsWith("\n") || text.indexOf("\n") !== text.length - 1)
    throw new LineError("not one complete line");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new LineError(`not valid JSON (${(error as Error).message})`);
  }
  const line = value as Record<string, unknown>;
  if (typeof line !== "object" || line === null) throw new LineError("not a JSON object");
  if (typeof line.format === "number" && line.format > SNAPSHOT_FORMAT)
    throw new LineError(
      `format ${line.format} is not understood by this version (it reads format ${SNAPSHOT_FORMAT})`,
      line.format,
    );
  const crcAt = text.lastIndexOf(',"crc":');
  if (crcAt < 0 || crc32Text(`${text.slice(0, crcAt)}}`) !== line.crc)
    throw new LineError("checksum mismatch: the file was changed or damaged");
  if (line.format !== SNAPSHOT_FORMAT || !isPositiveSafeInteger(line.generation))
    throw new LineError("no generation number");
  return line.generation;
}

/** Where the storage's current generation lives. */
export interface CurrentGeneration {
  /** 0: the layout of earlier versions, at the top of the storage directory. */
  generation: number;
  /** Absolute directory holding its files. */
  directory: string;
}

/**
 * Reads `CURRENT` and checks that the generation it names is there. A
 * damaged pointer, one of a newer format, or one naming a generation whose
 * directory or snapshot is missing is `StorageCorrupted` naming the file;
 * nothing is changed. Without `CURRENT`, the storage is generation 0 unless
 * only generation directories exist (the pointer was lost: corruption too).
 */
export async function readCurrent(
  fs: FileSystem,
  root: string,
  names: readonly string[],
): Promise<CurrentGeneration> {
  // A bounded read: a pointer is one short line, and open reads no file whole.
  const bytes = await fs.read(`${root}/${POINTER_FILE}`, { offset: 0, length: POINTER_MAX });
  if (bytes === undefined) {
    const generations = names.filter((n) => parseGenerationDir(n) !== undefined);
    if (generations.length > 0 && !names.includes(MAIN_FILE))
      throw new StorageCorrupted(
        `${POINTER_FILE} is missing, but ${generations.join(", ")} exist${generations.length === 1 ? "s" : ""} and ${MAIN_FILE} does not: the pointer to the current generation was lost`,
        { file: POINTER_FILE },
      );
    return { generation: 0, directory: root };
  }
  let generation: number;
  try {
    if (bytes.length >= POINTER_MAX) throw new LineError(`longer than ${POINTER_MAX} bytes`);
    generation = decodePointer(Buffer.from(bytes).toString("utf8"));
  } catch (error) {
    if (!(error instanceof LineError)) throw error;
    const cause =
      error.unknownFormat !== undefined
        ? new StorageVersionError(`${POINTER_FILE} is format ${error.unknownFormat}`)
        : error;
    throw new StorageCorrupted(
      `${POINTER_FILE}: ${error.message}`,
      { file: POINTER_FILE },
      { cause },
    );
  }
  const dir = generationDir(generation);
  const snapshot = `${dir}/${SNAPSHOT_FILE}`;
  if ((await fs.stat(`${root}/${snapshot}`)) === undefined)
    throw new StorageCorrupted(
      `${POINTER_FILE} names generation ${generation}, but ${snapshot} is missing`,
      { file: snapshot },
    );
  return { generation, directory: `${root}/${dir}` };
}

/**
 * Writes the pointer to `generation` into a temp file, flushed: nothing
 * changes yet (after a fault here the old pointer stands, and the next open
 * removes the temp file).
 */
export async function preparePointer(
  fs: FileSystem,
  root: string,
  generation: number,
): Promise<void> {
  const temp = `${root}/${POINTER_TEMP}`;
  await fs.write(temp, Buffer.from(encodePointer(generation)));
  await fs.flush(temp);
}

/**
 * Makes the prepared pointer the current one: renamed over `CURRENT`, then
 * (with `flush`) the directory flushed. A crash before the rename leaves the
 * old pointer whole; after it, the new one. The caller flushes the directory
 * itself, before removing the old generation, when `flush` is false.
 */
export async function switchPointer(fs: FileSystem, root: string, flush: boolean): Promise<void> {
  await fs.rename(`${root}/${POINTER_TEMP}`, `${root}/${POINTER_FILE}`);
  if (flush) await fs.flush(root);
}
