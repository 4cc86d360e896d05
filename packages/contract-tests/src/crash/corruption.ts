import { jsonEqual, Session } from "@durably/core";
import type {
  ConversationId,
  CorruptionLocation,
  Cursor,
  EntryId,
  Json,
  Storage,
  TaskId,
} from "@durably/core";
import { CrashCheckFailed, describeError } from "./failure.js";
import { ObservedStorage } from "./observed-storage.js";
import type { CommitterIds } from "./protocol.js";
import { isDurablyError, withTempStorage } from "./temp-storage.js";
import type { CorruptionKind, CrashConformanceOptions } from "./types.js";
import { commitStep, CounterDoc, setUpCommitters, stepOfEntry, taskMark } from "./workload.js";

/** Enough commits that "the middle" of a file is well inside committed data. */
const STEPS = 12;

interface Written {
  ids: CommitterIds;
  steps: { step: number; entryId: number }[];
}

async function writeSome(options: CrashConformanceOptions, path: string): Promise<Written> {
  const ids = await setUpCommitters(await options.open(path), 1);
  const first = ids[0];
  if (first === undefined) throw new RangeError("no committer");
  const session = await Session.open(new ObservedStorage(await options.open(path)));
  const steps: Written["steps"] = [];
  try {
    for (let step = 1; step <= STEPS; step++)
      steps.push({ step, entryId: await commitStep(session, first, 0, step) });
  } finally {
    await session.close();
  }
  return { ids: first, steps };
}

function whereOf(error: unknown): string | undefined {
  const location = (error as { location?: CorruptionLocation }).location;
  if (location === undefined) return undefined;
  const named =
    (typeof location.file === "string" && location.file !== "") ||
    (typeof location.key === "string" && location.key !== "") ||
    (typeof location.table === "string" && location.table !== "");
  if (!named) return undefined;
  if (location.line !== undefined && !(Number.isSafeInteger(location.line) && location.line > 0))
    return undefined;
  return JSON.stringify(location);
}

function mustBeCorruption(error: unknown, during: string, kind: CorruptionKind): void {
  if (!isDurablyError(error, "StorageCorrupted", "STORAGE_CORRUPTED"))
    throw new CrashCheckFailed(
      "corruption is reported, never guessed around",
      `after "${kind}", ${during} rejected with ${describeError(error)}, expected StorageCorrupted`,
      { cause: error },
    );
  if (whereOf(error) === undefined)
    throw new CrashCheckFailed(
      "corruption is reported, never guessed around",
      `after "${kind}", ${during} rejected with StorageCorrupted but its location ${JSON.stringify((error as { location?: unknown }).location)} names no file (with a positive line), key or table`,
      { cause: error },
    );
}

/**
 * Reads back everything written. Stops at the first rejection (which must be
 * StorageCorrupted); a read that resolves must return exactly what was
 * committed. Returns whether a read reported the corruption.
 */
async function readBack(
  storage: Storage,
  written: Written,
  kind: CorruptionKind,
): Promise<boolean> {
  const wrong = (detail: string): never => {
    throw new CrashCheckFailed(
      "corruption is reported, never guessed around",
      `after "${kind}", ${detail} instead of reporting StorageCorrupted`,
    );
  };
  const read = async <T>(
    what: string,
    run: () => Promise<T>,
  ): Promise<{ value: T } | undefined> => {
    try {
      return { value: await run() };
    } catch (error) {
      mustBeCorruption(error, what, kind);
      return undefined;
    }
  };
  const { ids, steps } = written;
  for (const { step, entryId } of steps) {
    const got = await read(`entry(${entryId})`, () => storage.entry(entryId as EntryId));
    if (got === undefined) return true;
    const mark = got.value === undefined ? undefined : stepOfEntry(got.value.entry);
    if (mark?.step !== step)
      wrong(`entry(${entryId}) of committed step ${step} returned ${JSON.stringify(got.value)}`);
  }
  const scanned: number[] = [];
  let cursor: Cursor | undefined;
  do {
    const page = await read(`scanEntries(conversation ${ids.conversationId})`, () =>
      storage.scanEntries(
        { conversationId: ids.conversationId as ConversationId, order: "ascending" },
        100,
        cursor,
      ),
    );
    if (page === undefined) return true;
    for (const entry of page.value.items) scanned.push(entry.id);
    cursor = page.value.next;
  } while (cursor !== undefined);
  const expectedIds = steps.map((s) => s.entryId);
  if (!jsonEqual(scanned, expectedIds))
    wrong(
      `scanEntries listed entries ${JSON.stringify(scanned)}, committed ${JSON.stringify(expectedIds)}`,
    );

  const last = steps.at(-1);
  if (last === undefined) return false;
  const expected: Json = { committer: 0, step: last.step, entryId: last.entryId };
  const scope = {
    kind: "conversation" as const,
    conversationId: ids.conversationId as ConversationId,
  };
  const record = await read("findDocument(counter)", () =>
    storage.findDocument({ kind: CounterDoc.kind, scope }, "current"),
  );
  if (record === undefined) return true;
  if (record.value === undefined)
    wrong("findDocument returned nothing for the committed counter document");
  else {
    const id = record.value.id;
    const document = await read(`document(${id})`, () => storage.document(id, "current"));
    if (document === undefined) return true;
    if (!jsonEqual(document.value?.value ?? null, expected))
      wrong(
        `document(${id}) returned ${JSON.stringify(document.value)}, committed ${JSON.stringify(expected)}`,
      );
  }
  const task = await read(`task(${ids.taskId})`, () => storage.task(ids.taskId as TaskId));
  if (task === undefined) return true;
  const mark = task.value === undefined ? undefined : taskMark(task.value);
  if (!jsonEqual(mark ?? null, expected))
    wrong(
      `task(${ids.taskId}) returned checkpoint ${JSON.stringify(mark)}, committed ${JSON.stringify(expected)}`,
    );
  return false;
}

/**
 * Commit, close, let the adapter damage its files, then open: the open (or a
 * read) must fail with StorageCorrupted naming where, and nothing may come
 * back silently changed or missing.
 */
export async function runCorruption(
  options: CrashConformanceOptions & { corrupt: NonNullable<CrashConformanceOptions["corrupt"]> },
  kind: CorruptionKind,
): Promise<void> {
  await withTempStorage(async (path) => {
    const written = await writeSome(options, path);
    await options.corrupt(path, kind);
    let storage: Storage;
    try {
      storage = await options.open(path);
    } catch (error) {
      mustBeCorruption(error, "open", kind);
      return;
    }
    try {
      const reported = await readBack(storage, written, kind);
      if (!reported)
        throw new CrashCheckFailed(
          "corruption is reported, never guessed around",
          `after "${kind}" the storage opened and every read returned the committed data: the damage went unnoticed (does the corrupt hook damage committed data?)`,
        );
    } finally {
      await storage.close().catch(() => undefined);
    }
  });
}
