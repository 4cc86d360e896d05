import { CrashCheckFailed, registerCrashConformance } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { failureOf, recordingApi } from "./support/recording-api.js";

// The same JSONL code over a disk that acknowledges appends and flushes before
// the bytes reach the file (they follow up to 50 ms later). A SIGKILL in that
// window loses acknowledged commits: the crash suite must notice.
describe("crash conformance fails a backend whose disk acknowledges writes early", () => {
  const { api, tests } = recordingApi();
  registerCrashConformance(api, "JSONL over a write-behind disk", {
    childModule: new URL("./crash/late-write-open-child.ts", import.meta.url),
    open: (path) => openJsonlStorage(path),
    nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
    iterations: 6,
    seed: 7,
  });

  it("registers the kill, single-owner and (without a corrupt hook) no corruption scenarios", () => {
    expect(tests.map((test) => test.name.split(" > ")[2])).toEqual([
      "kill -9 while committing",
      "kill -9 while committing",
      "single owner",
    ]);
  });

  it("the one-committer kill loop fails with 'acknowledged commits survive' and says how to replay", async () => {
    const error = await failureOf(tests.find((test) => test.name.includes("one committer")));
    expect(error).toBeInstanceOf(CrashCheckFailed);
    const failure = error as CrashCheckFailed;
    expect(failure.rule).toBe("acknowledged commits survive");
    expect(failure.message).toMatch(
      /^acknowledged commits survive: .* was acknowledged but is not stored after the kill/,
    );
    expect(failure.message).toMatch(/at iteration \d+ of \d+ .*replay with CRASH_SEED=\d+/s);
  }, 120_000);

  it("the 16-committer kill loop fails the same way", async () => {
    const error = await failureOf(
      tests.find((test) => test.name.includes("16 concurrent committers")),
    );
    expect(error).toBeInstanceOf(CrashCheckFailed);
    expect((error as CrashCheckFailed).rule).toBe("acknowledged commits survive");
  }, 120_000);
});
