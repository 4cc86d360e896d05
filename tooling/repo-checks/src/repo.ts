import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

export interface PublishedPackage {
  name: string;
  version: string;
  /** Absolute directory. */
  dir: string;
  /** Directory relative to the root, e.g. `packages/core`. */
  relative: string;
  manifest: Record<string, unknown> & { files?: string[] };
}

/** Every non-private package under packages/, the ones npm users install. */
export function publishedPackages(): PublishedPackage[] {
  const base = path.join(ROOT, "packages");
  return readdirSync(base)
    .filter((name) => existsSync(path.join(base, name, "package.json")))
    .map((name) => {
      const dir = path.join(base, name);
      const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as Record<
        string,
        unknown
      >;
      return {
        name: manifest.name as string,
        version: manifest.version as string,
        dir,
        relative: `packages/${name}`,
        manifest,
      };
    })
    .filter((p) => p.manifest.private !== true);
}

/** The Markdown files users read: the root README, docs/, and each published package's. */
export function documentationFiles(): string[] {
  const files = [path.join(ROOT, "README.md")];
  const docs = path.join(ROOT, "docs");
  if (existsSync(docs))
    for (const name of readdirSync(docs))
      if (name.endsWith(".md")) files.push(path.join(docs, name));
  for (const pkg of publishedPackages())
    for (const name of readdirSync(pkg.dir))
      if (name.endsWith(".md") && name !== "CHANGELOG.md") files.push(path.join(pkg.dir, name));
  return files;
}
