/**
 * Child process for the compaction crash tests. Opens the prepared storage
 * at argv[2] (fsync when argv[3] is "fsync"), then commits steps in a loop
 * while a compaction runs, printing `ack <step> <seq>` after each
 * acknowledged commit. Each step writes, in one batch, entry `step <n>`,
 * the current-only document 2 set to `c<n>`, the rewindable document 3 set
 * to `r<n>` and task 4's checkpoint n.
 *
 * argv[4] is `<index>:<before|after>`: the compaction's index-th file
 * operation (counting only the compaction's own: those on `gen-*` paths or
 * `CURRENT*`, flushes of the storage directory and removals) is preceded or
 * followed by a real SIGKILL of this process. `-1:before` kills nothing and
 * prints `op <index> <label>` for each of them (to list the kill points).
 * It prints `compacted <generation>` or `compact-failed <error>` when the
 * compaction settles, `poisoned` if a commit is refused for it, and `done`
 * at the end.
 */
import { basename } from "node:path";
import type { DocumentId, EntryId, TaskId } from "@durably/core";
import {
  nodeFileSystem,
  openJsonlStorage,
  type AppendFile,
  type FileSystem,
} from "../../src/index.js";

const [path, mode, point] = process.argv.slice(2) as [string, string, string];
const [atText, when] = point.split(":") as [string, "before" | "after"];
const killAt = Number(atText);
const root = path.replace(/\/+$/, "");
let armed = false;
let index = 0;

const isCompactionPath = (p: string, op: string) =>
  p.includes("/gen-") ||
  basename(p).startsWith("CURRENT") ||
  (op === "flush" && p === root) ||
  op === "remove" ||
  op === "removeDirectory";

async function step<T>(op: string, p: string, run: () => Promise<T>): Promise<T> {
  if (!armed || !isCompactionPath(p, op)) return run();
  const at = index++;
  const label = `${op} ${p.slice(root.length + 1)}`;
  if (killAt < 0) process.stdout.write(`op ${at} ${label}\n`);
  if (at === killAt && when === "before") process.kill(process.pid, "SIGKILL");
  const result = await run();
  if (at === killAt && when === "after") process.kill(process.pid, "SIGKILL");
  return result;
}

const killing: FileSystem = {
  mkdir: (p) => step("mkdir", p, () => nodeFileSystem.mkdir(p)),
  list: (p) => nodeFileSystem.list(p),
  stat: (p) => nodeFileSystem.stat(p),
  read: (p, range) => nodeFileSystem.read(p, range),
  openAppend: async (p): Promise<AppendFile> => {
    const file = await step("openAppend", p, () => nodeFileSystem.openAppend(p));
    return {
      path: p,
      append: (data) => step("append", p, () => file.append(data)),
      flush: () => step("flush", p, () => file.flush()),
      close: () => file.close(),
    };
  },
  write: (p, data) => step("write", p, () => nodeFileSystem.write(p, data)),
  flush: (p) => step("flush", p, () => nodeFileSystem.flush(p)),
  rename: (from, to) => step("rename", from, () => nodeFileSystem.rename(from, to)),
  remove: (p) => step("remove", p, () => nodeFileSystem.remove(p)),
  removeDirectory: (p) =>
    step("removeDirectory", p, async () => nodeFileSystem.removeDirectory?.(p)),
  truncate: (p, size) => nodeFileSystem.truncate(p, size),
  lock: (p) => nodeFileSystem.lock(p),
};

const storage = await openJsonlStorage(path, {
  fsync: mode === "fsync",
  fs: killing,
  compaction: false,
});
const entries = await storage.scanEntries({ conversationId: 1 as never }, 1);
const newest = entries.items[0]?.data;
let n = (typeof newest === "string" ? Number(newest.slice(5)) : 0) + 1;
process.stdout.write(`ready ${n}\n`);

async function commitStep(): Promise<boolean> {
  let seq = 0;
  try {
    const result = await storage.commit(
      [
        [
          {
            type: "entry",
            value: {
              id: (1000 + n) as EntryId,
              conversationId: 1 as never,
              kind: "note",
              data: `step ${n}`,
            },
          },
          {
            type: "document.change",
            id: 2 as DocumentId,
            content: { kind: "base", version: 1, value: { text: `c${n}` } },
          },
          {
            type: "document.change",
            id: 3 as DocumentId,
            content: { kind: "delta", version: 1, ops: [["s", ["text"], `r${n}`]] },
          },
          {
            type: "task",
            value: {
              id: 4 as TaskId,
              conversationId: 1 as never,
              kind: "app.task",
              version: 1,
              input: null,
              background: false,
              abortRequested: false,
              state: { status: "running", checkpoint: n },
            },
          },
        ],
      ],
      (_i, s) => (seq = s),
    );
    if (result.refused) throw result.refused;
  } catch (error) {
    process.stdout.write(`poisoned ${String(error).split("\n")[0]}\n`);
    return false;
  }
  process.stdout.write(`ack ${n} ${seq}\n`);
  n++;
  return true;
}

armed = true;
let settled = false;
const compaction = storage
  .compact()
  .then(
    (result) => process.stdout.write(`compacted ${result.generation}\n`),
    (error: unknown) => process.stdout.write(`compact-failed ${String(error).split("\n")[0]}\n`),
  )
  .finally(() => (settled = true));
// Commits go on while the compaction runs, and a few after it.
let after = 0;
while (after < 3) {
  if (!(await commitStep())) break;
  if (settled) after++;
}
await compaction;
armed = false;
await storage.close().catch(() => undefined);
process.stdout.write("done\n");
