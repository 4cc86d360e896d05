import { writeFileSync } from "node:fs";
import path from "node:path";
import type { Packed } from "./pack.ts";
import { describeRun, run } from "./run.ts";

/** Every import path a package offers: its name, and its name plus each subpath of its exports map. */
export function entryPoints(packed: Packed): string[] {
  const exports = (packed.pkg.manifest.exports ?? { ".": {} }) as Record<string, unknown>;
  return Object.keys(exports).map((key) =>
    key === "." ? packed.pkg.name : `${packed.pkg.name}/${key.replace(/^\.\//, "")}`,
  );
}

/** A module that imports every entry point of every published package (its whole public API), for tsc and for node. */
export function importEveryPackage(packed: readonly Packed[]): string {
  const names = packed.flatMap(entryPoints).map((name, i) => ({ name, as: `pkg${i}` }));
  return [
    ...names.map(({ name, as }) => `import * as ${as} from "${name}";`),
    "",
    "const packages = {",
    ...names.map(({ name, as }) => `  "${name}": ${as},`),
    "};",
    "for (const [name, api] of Object.entries(packages))",
    "  console.log(`${name}: ${Object.keys(api).length} exports`);",
    "",
  ].join("\n");
}

/**
 * A fresh npm project (as a user's) with every tarball installed. Install
 * scripts are off so better-sqlite3 is not compiled again; its JavaScript,
 * pg and classic-level's prebuilt binary still load.
 */
export async function createConsumer(dir: string, packed: readonly Packed[]): Promise<void> {
  writeFileSync(
    path.join(dir, "package.json"),
    `${JSON.stringify({ name: "durably-consumer", private: true, type: "module" }, null, 2)}\n`,
  );
  const install = await run(
    "npm",
    [
      "install",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      ...packed.map((p) => p.tarball),
      // What a user adds next to them: the Node types, the LevelDB store the store README uses.
      "@types/node@^20",
      "classic-level@^3",
    ],
    { cwd: dir, env: { ...process.env, npm_config_update_notifier: "false" } },
  );
  if (install.code !== 0) throw new Error(describeRun("npm install of the tarballs", install));
}

/** The user's tsconfig: strict, nodenext, and library declarations checked too. */
export const CONSUMER_TSCONFIG = {
  compilerOptions: {
    strict: true,
    target: "ES2022",
    module: "nodenext",
    moduleResolution: "nodenext",
    skipLibCheck: false,
    types: ["node"],
    outDir: "out",
  },
  include: ["src/*.ts"],
};
