/**
 * Comments and docs describe the rules themselves or point at
 * docs/architecture.md and the package READMEs; nothing cites a design
 * document outside the repository (a reader of the code or of a published
 * package has no such file).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { ROOT } from "../src/repo.ts";

const SKIP = new Set([
  "node_modules",
  "dist",
  ".turbo",
  ".tools",
  ".examples",
  "bench-results",
  ".git",
]);
const OUTSIDE = [/\bDESIGN\b(?!\.md\b)/, /\bDESIGN\.md\b/, /\.\.\/shared\//, /\/work\/shared/];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name)) return [];
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return files(full);
    return /\.(ts|mts|mjs|js|md)$/.test(name) ? [full] : [];
  });
}

it("no source file, comment or Markdown in the repository cites a design document outside it", () => {
  const self = path.relative(ROOT, import.meta.filename);
  const found: string[] = [];
  for (const top of ["packages", "apps", "tooling", "scripts", "docs"])
    for (const file of files(path.join(ROOT, top))) {
      const relative = path.relative(ROOT, file);
      if (relative === self || relative.endsWith("packed-packages.test.ts")) continue;
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (OUTSIDE.some((pattern) => pattern.test(line)))
            found.push(`${relative}:${i + 1}: ${line.trim()}`);
        });
    }
  for (const line of readFileSync(path.join(ROOT, "README.md"), "utf8").split("\n"))
    if (OUTSIDE.some((pattern) => pattern.test(line))) found.push(`README.md: ${line.trim()}`);
  expect(found).toEqual([]);
});
