import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { registerCrashConformance, type CorruptionKind } from "@durably/contract-tests";
import { describe, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";

/** Damages a committed line in the middle of main.jsonl (its later lines stay in place). */
function corrupt(path: string, kind: CorruptionKind): Promise<void> {
  const file = join(path, "main.jsonl");
  const lines = readFileSync(file, "utf8").split("\n").slice(0, -1);
  const middle = Math.floor(lines.length / 2);
  const line = lines[middle] as string;
  if (kind === "flip-byte") {
    // Flip a byte inside the JSON (not the checksum digits): still parses, fails its checksum.
    const at = line.indexOf('"seq":') + 2;
    lines[middle] =
      `${line.slice(0, at)}${String.fromCharCode(line.charCodeAt(at) ^ 1)}${line.slice(at + 1)}`;
  } else lines[middle] = line.slice(0, Math.floor(line.length / 2));
  writeFileSync(file, lines.map((l) => `${l}\n`).join(""));
  return Promise.resolve();
}

registerCrashConformance({ describe, it }, "JSONL storage", {
  childModule: new URL("./crash/open-child.ts", import.meta.url),
  open: (path) => openJsonlStorage(path),
  nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
  corrupt,
  iterations: 3,
});

// The same with fsync on (sidecars flushed before the markers, markers before publishing).
registerCrashConformance({ describe, it }, "JSONL storage (fsync on)", {
  childModule: new URL("./crash/open-child-fsync.ts", import.meta.url),
  open: (path) => openJsonlStorage(path, { fsync: true }),
  nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
  corrupt,
  iterations: 3,
});
