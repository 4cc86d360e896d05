import { readFileSync, writeFileSync } from "node:fs";
import { registerCrashConformance, type CorruptionKind } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { open } from "./crash/open-child.js";
import { damage, largest } from "./level-files.js";

/**
 * Damage for the shared corruption scenarios, in LevelDB's write-ahead log
 * (where the suite's few commits are): a flipped bit in the middle of it, or
 * 16 bytes cut out of its middle with everything after them kept.
 */
function corrupt(path: string, kind: CorruptionKind): Promise<void> {
  const log = largest(path, ".log");
  const bytes = readFileSync(log);
  const middle = Math.floor(bytes.length / 2);
  if (kind === "flip-byte") damage(log, "flip", middle, 2);
  else writeFileSync(log, Buffer.concat([bytes.subarray(0, middle), bytes.subarray(middle + 16)]));
  return Promise.resolve();
}

// The shared kill -9 suite over StoreStorage on classic-level (LevelDB on disk):
// a real child process commits through a Session and is SIGKILLed at seeded
// random moments; this process reopens the database and checks it.
registerCrashConformance({ describe, it, expect }, "StoreStorage on classic-level", {
  childModule: new URL("./crash/open-child.ts", import.meta.url),
  open,
  nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
  corrupt,
});
