import { mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import type { PublishedPackage } from "./repo.ts";
import { ROOT } from "./repo.ts";
import { describeRun, run } from "./run.ts";

export interface Packed {
  pkg: PublishedPackage;
  /** The tarball, as `pnpm pack` makes it for `pnpm publish`. */
  tarball: string;
  /** Where its contents were extracted (`<dir>/package/...`). */
  root: string;
}

/** `pnpm pack` (workspace ranges rewritten, publishConfig applied), then the tarball extracted. */
export async function pack(pkg: PublishedPackage, into: string): Promise<Packed> {
  const packs = path.join(into, "packs");
  mkdirSync(packs, { recursive: true });
  const before = new Set(readdirSync(packs));
  const packed = await run(
    process.execPath,
    [path.join(ROOT, "scripts", "pnpm.mjs"), "pack", "--pack-destination", packs],
    { cwd: pkg.dir },
  );
  if (packed.code !== 0) throw new Error(describeRun(`pnpm pack in ${pkg.relative}`, packed));
  const made = readdirSync(packs).filter((f) => !before.has(f));
  if (made.length !== 1)
    throw new Error(`pnpm pack in ${pkg.relative} made ${made.join(", ") || "no tarball"}`);
  const tarball = path.join(packs, made[0] as string);
  const extracted = path.join(into, "extracted", pkg.name.replace("/", "__"));
  mkdirSync(extracted, { recursive: true });
  const untar = await run("tar", ["-xzf", tarball, "-C", extracted], { cwd: into });
  if (untar.code !== 0) throw new Error(describeRun(`tar -xzf ${tarball}`, untar));
  return { pkg, tarball, root: path.join(extracted, "package") };
}

/** Every file of an extracted package, relative to its root, with `/` separators. */
export function listFiles(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? listFiles(path.join(dir, entry.name), `${prefix}${entry.name}/`)
      : [`${prefix}${entry.name}`],
  );
}
