import { CrashCheckFailed, registerSyscallFaultConformance } from "@durably/contract-tests";
import type { CrashTestApi } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";

interface RecordedTest {
  name: string;
  body: () => Promise<void>;
}

/** A fake runner that only records what the suite registers, so this test can run a case and look at how it fails. */
function recordingApi(): { api: CrashTestApi; tests: RecordedTest[] } {
  const tests: RecordedTest[] = [];
  const path: string[] = [];
  const api: CrashTestApi = {
    describe(name, body) {
      path.push(name);
      try {
        body();
      } finally {
        path.pop();
      }
    },
    it(name, body) {
      tests.push({ name: [...path, name].join(" > "), body });
    },
    expect,
  };
  return { api, tests };
}

// The real JSONL code with fsync on, over a disk port that throws fsync errors
// away: when strace fails an fsync, the commit is acknowledged anyway. The
// syscall-fault suite must say so.
describe("syscall-fault conformance fails a backend that ignores a failed fsync", () => {
  const { api, tests } = recordingApi();
  registerSyscallFaultConformance(api, "JSONL ignoring fsync errors", {
    childModule: new URL("./crash/fsync-error-ignoring-open-child.ts", import.meta.url),
    open: (path) => openJsonlStorage(path, { fsync: true }),
    nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
    syscallFaults: { files: (path) => [path], samples: 2 },
    seed: 11,
  });

  it("the sync case fails with 'a failed syscall reaches the writer', naming the call and how to replay", async () => {
    const sync = tests.find((test) => test.name.includes("from fsync/"));
    if (sync === undefined) throw new Error("the suite registered no sync case");
    let failure: unknown;
    try {
      await sync.body();
    } catch (error) {
      failure = error;
    }
    if (failure === undefined && /skipped:/.test(sync.name))
      return console.warn(`not run: ${sync.name}`); // strace cannot run here; the suite said why
    expect(failure).toBeInstanceOf(CrashCheckFailed);
    const error = failure as CrashCheckFailed;
    expect(error.rule).toBe("a failed syscall reaches the writer");
    expect(error.message).toMatch(/^a failed syscall reaches the writer: fsync on storage\/\S+ /);
    expect(error.message).toMatch(
      /the writer got no error|was acknowledged|close resolved|open resolved/,
    );
    expect(error.message).toMatch(
      /inject=fsync:error=E[A-Z]+:when=\d+ .*replay with CRASH_SEED=\d+/s,
    );
    console.info(`as expected: ${error.message}`);
  }, 180_000);
});
