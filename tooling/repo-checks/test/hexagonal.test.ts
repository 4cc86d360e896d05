/**
 * The architecture's two rules, checked on the sources: core has no runtime
 * dependency and imports nothing outside itself (no adapter, no third-party
 * package, no Node built-in, so it runs in a browser too); every other
 * package reaches core only through its published entry points.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { publishedPackages, ROOT } from "../src/repo.ts";

/** Every module specifier a TypeScript source file names (static imports, re-exports, dynamic imports). */
function specifiers(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/(?:\bfrom|^\s*import|\bimport\s*\()\s*["']([^"']+)["']/gm))
    found.push(match[1] as string);
  return found;
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return /\.(ts|mts)$/.test(name) ? [full] : [];
  });
}

const core = publishedPackages().find((p) => p.name === "@durably/core");
const coreEntries = new Set(
  Object.keys((core?.manifest.exports ?? {}) as Record<string, unknown>)
    .filter((key) => !key.includes("package.json"))
    .map((key) => (key === "." ? "@durably/core" : `@durably/core/${key.replace(/^\.\//, "")}`)),
);

it("core declares no runtime dependency", () => {
  expect(core, "packages/core").toBeDefined();
  expect(core?.manifest.dependencies ?? {}).toEqual({});
  expect(core?.manifest.peerDependencies ?? {}).toEqual({});
});

it("core's sources import only core's own modules: no adapter, no third-party package, no Node built-in", () => {
  const outside: string[] = [];
  const src = path.join(ROOT, "packages/core/src");
  for (const file of sources(src))
    for (const spec of specifiers(readFileSync(file, "utf8")))
      if (!spec.startsWith("./") && !spec.startsWith("../"))
        outside.push(`${path.relative(ROOT, file)} imports ${spec}`);
  expect(outside).toEqual([]);
});

it("adapters and apps reach core only through its published entry points", () => {
  expect(coreEntries.has("@durably/core")).toBe(true);
  const inside: string[] = [];
  const dirs = [
    ...publishedPackages()
      .filter((p) => p.name !== "@durably/core")
      .map((p) => path.join(p.dir, "src")),
    ...readdirSync(path.join(ROOT, "apps")).map((app) => path.join(ROOT, "apps", app, "src")),
  ];
  for (const dir of dirs)
    for (const file of sources(dir))
      for (const spec of specifiers(readFileSync(file, "utf8")))
        if (
          (spec.startsWith("@durably/core") && !coreEntries.has(spec)) ||
          /packages\/core\//.test(spec)
        )
          inside.push(`${path.relative(ROOT, file)} imports ${spec}`);
  expect(inside).toEqual([]);
});
