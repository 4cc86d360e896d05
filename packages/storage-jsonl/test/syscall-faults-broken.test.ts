import { CrashCheckFailed, registerSyscallFaultConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { failureOf, recordingApi } from "./support/recording-api.js";

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
    const failure = await failureOf(sync);
    if (failure === undefined && /skipped:/.test(sync?.name ?? ""))
      return console.warn(`not run: ${sync?.name}`); // strace cannot run here; the suite said why
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
