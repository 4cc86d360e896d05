/**
 * The complete backend printed in IMPLEMENTING.md ("A complete backend"),
 * exactly as printed there: extracted from the guide, written next to this
 * package, imported, and run through the storage, session and task suites.
 * A guide whose example stopped passing fails here.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Storage } from "@durably/core";
import { describe, expect, it } from "vitest";
import {
  registerSessionConformance,
  registerStorageConformance,
  registerTaskConformance,
  type StorageFactory,
} from "../src/index.js";

const FIRST_LINE = "// json-file-storage.ts:";

/** The body of the TypeScript block of `markdown` whose first line starts with `firstLine`. */
function codeBlock(markdown: string, firstLine: string): string {
  const blocks = [...markdown.matchAll(/^```ts[^\n]*\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? "");
  const found = blocks.filter((code) => code.startsWith(firstLine));
  if (found.length !== 1)
    throw new Error(`IMPLEMENTING.md has ${found.length} blocks starting with ${firstLine}, not 1`);
  return found[0] as string;
}

const guide = readFileSync(new URL("../IMPLEMENTING.md", import.meta.url), "utf8");
// Inside the package, so its imports resolve against this package's dependencies.
const dir = new URL("../.guide/", import.meta.url);
mkdirSync(dir, { recursive: true });
const file = new URL("json-file-storage.ts", dir);
writeFileSync(file, codeBlock(guide, FIRST_LINE));
const example = (await import(pathToFileURL(file.pathname).href)) as {
  openJsonFileStorage(path: string): Storage;
};

const factory: StorageFactory = async (use) => {
  const work = mkdtempSync(join(tmpdir(), "durably-guide-"));
  const path = join(work, "session.json");
  let current = example.openJsonFileStorage(path);
  try {
    await use(current, async () => {
      await current.close();
      return (current = example.openJsonFileStorage(path));
    });
  } finally {
    await current.close();
    rmSync(work, { recursive: true, force: true });
  }
};

const api = { describe, it, expect };
registerStorageConformance(api, "the guide's JSON file backend", factory);
registerSessionConformance(api, "the guide's JSON file backend", factory);
registerTaskConformance(api, "the guide's JSON file backend", factory);
