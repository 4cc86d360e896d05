/**
 * The published packages as npm users get them: each one packed with
 * `pnpm pack` (what `pnpm publish` uploads), its contents and manifest
 * checked, `publint` and `attw` run on the tarball, then every tarball
 * installed into a fresh npm project where a strict `tsc` (skipLibCheck
 * off) compiles a module importing every package plus the README examples,
 * and node runs it.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import semver from "semver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CONSUMER_TSCONFIG,
  createConsumer,
  entryPoints,
  importEveryPackage,
} from "../src/consumer.ts";
import { codeBlocks, relativeLinks } from "../src/markdown.ts";
import { listFiles, pack, type Packed } from "../src/pack.ts";
import { documentationFiles, publishedPackages, ROOT } from "../src/repo.ts";
import { describeRun, run } from "../src/run.ts";

const require = createRequire(import.meta.url);
const work = mkdtempSync(path.join(tmpdir(), "durably-packed-"));
const published = publishedPackages();
const packed = new Map<string, Packed>();
const LICENSE = readFileSync(path.join(ROOT, "LICENSE"), "utf8");

/** Paths that exist only in a clone of the repository, and references to a design document outside it. */
const REPOSITORY_ONLY = [/apps\/demo/, /--conditions=@durably\/source/, /scripts\/pnpm\.mjs/];
const OUTSIDE_DESIGN = [/\bDESIGN\b/, /\.\.\/shared\//, /\/work\//];

beforeAll(async () => {
  for (const pkg of published) packed.set(pkg.name, await pack(pkg, work));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

function packedOf(name: string): Packed {
  const found = packed.get(name);
  if (found === undefined) throw new Error(`${name} was not packed`);
  return found;
}

/** A command this package installs (node_modules/.bin). */
function bin(name: string): string {
  return path.join(import.meta.dirname, "..", "node_modules", ".bin", name);
}

it("the published packages are the nine libraries", () => {
  expect(published.map((p) => p.name).sort()).toEqual([
    "@durably/contract-tests",
    "@durably/core",
    "@durably/langgraph",
    "@durably/model-ai-sdk",
    "@durably/storage-jsonl",
    "@durably/storage-memory",
    "@durably/storage-postgres",
    "@durably/storage-sqlite",
    "@durably/storage-store",
  ]);
});

describe.each(published.map((p) => [p.name, p] as const))("%s, packed", (name, pkg) => {
  const manifest = () =>
    JSON.parse(readFileSync(path.join(packedOf(name).root, "package.json"), "utf8")) as {
      [field: string]: unknown;
      version: string;
      peerDependencies?: Record<string, string>;
    };

  it("holds the repository's LICENSE, its README, its built code and its sources", () => {
    const files = listFiles(packedOf(name).root);
    expect(readFileSync(path.join(packedOf(name).root, "LICENSE"), "utf8")).toBe(LICENSE);
    for (const file of [
      "README.md",
      "package.json",
      "dist/index.js",
      "dist/index.d.ts",
      "src/index.ts",
    ])
      expect(files, `${name} lacks ${file}`).toContain(file);
    expect(files.filter((f) => /(^|\/)(test|node_modules)\//.test(f))).toEqual([]);
  });

  it("names its repository with its directory, its homepage, its issue tracker and the MIT license", () => {
    const m = manifest();
    expect(m.license).toBe("MIT");
    expect(m.repository).toEqual({
      type: "git",
      url: "git+https://github.com/durably-dev/durably.git",
      directory: pkg.relative,
    });
    expect(m.homepage).toBe(
      `https://github.com/durably-dev/durably/tree/main/${pkg.relative}#readme`,
    );
    expect(m.bugs).toEqual({ url: "https://github.com/durably-dev/durably/issues" });
  });

  it("has a real version, no workspace: range left, and a peer range on core that admits its patches but not its next minor", () => {
    const m = manifest();
    expect(semver.valid(m.version), "version").toBe(m.version);
    expect(semver.gte(m.version, "0.1.0"), `version ${m.version}`).toBe(true);
    expect(JSON.stringify(m)).not.toContain("workspace:");
    if (name === "@durably/core") return;
    const core = published.find((p) => p.name === "@durably/core")?.version as string;
    const range = m.peerDependencies?.["@durably/core"] ?? "(none)";
    expect(semver.satisfies(core, range), `${range} admits core ${core}`).toBe(true);
    expect(
      semver.satisfies(semver.inc(core, "patch") as string, range),
      `${range} admits the next patch`,
    ).toBe(true);
    expect(
      semver.satisfies(semver.inc(core, "minor") as string, range),
      `${range} refuses the next minor`,
    ).toBe(false);
  });

  it("has source maps and declaration maps that point only at files inside the package", () => {
    const root = packedOf(name).root;
    const maps = listFiles(root).filter((f) => f.endsWith(".map"));
    expect(maps.length).toBeGreaterThan(0);
    const outside: string[] = [];
    for (const map of maps) {
      const { sources } = JSON.parse(readFileSync(path.join(root, map), "utf8")) as {
        sources: string[];
      };
      for (const source of sources) {
        const target = path.resolve(path.dirname(path.join(root, map)), source);
        if (!target.startsWith(`${root}${path.sep}`) || !existsSync(target))
          outside.push(`${map} -> ${source}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it("has Markdown whose relative links resolve inside the package", () => {
    const root = packedOf(name).root;
    const broken: string[] = [];
    for (const file of listFiles(root).filter((f) => f.endsWith(".md")))
      for (const link of relativeLinks(path.join(root, file))) {
        const target = path.resolve(path.dirname(path.join(root, file)), link);
        if (!target.startsWith(`${root}${path.sep}`) || !existsSync(target))
          broken.push(`${file}: ${link}`);
      }
    expect(broken).toEqual([]);
  });

  it("has Markdown that points at no repository-only path and no design document outside the package", () => {
    const root = packedOf(name).root;
    const found: string[] = [];
    for (const file of listFiles(root).filter((f) => f.endsWith(".md"))) {
      const lines = readFileSync(path.join(root, file), "utf8").split("\n");
      lines.forEach((line, i) => {
        for (const pattern of [...REPOSITORY_ONLY, ...OUTSIDE_DESIGN])
          if (pattern.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  it("is clean for publint --strict", async () => {
    const result = await run(bin("publint"), ["run", "--strict", packedOf(name).tarball], {
      cwd: work,
    });
    expect(result.code, describeRun("publint", result)).toBe(0);
  });

  it("is clean for attw --pack --profile esm-only", async () => {
    const result = await run(
      bin("attw"),
      ["--pack", packedOf(name).tarball, "--profile", "esm-only", "--no-color"],
      { cwd: work },
    );
    expect(result.code, describeRun("attw", result)).toBe(0);
  });
});

describe("a fresh npm project with every tarball installed", () => {
  const dir = path.join(work, "consumer");

  beforeAll(async () => {
    mkdirSync(path.join(dir, "src"), { recursive: true });
    await createConsumer(dir, [...packed.values()]);
    writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify(CONSUMER_TSCONFIG, null, 2));
    writeFileSync(path.join(dir, "src", "index.ts"), importEveryPackage([...packed.values()]));
    for (const block of documentationFiles().flatMap(codeBlocks))
      if (block.kind === "example")
        writeFileSync(path.join(dir, "src", block.fileName), block.code);
  });

  it("compiles a module importing every package and subpath, and every README example, with strict tsc and skipLibCheck off", async () => {
    const result = await run(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", dir], {
      cwd: dir,
    });
    expect(result.code, describeRun("tsc", result)).toBe(0);
  });

  it("loads every package and subpath in node", async () => {
    const result = await run(process.execPath, [path.join(dir, "out", "index.js")], { cwd: dir });
    expect(result.code, describeRun("node out/index.js", result)).toBe(0);
    for (const name of [...packed.values()].flatMap(entryPoints))
      expect(result.stdout).toMatch(new RegExp(`^${name}: [1-9]\\d* exports$`, "m"));
  });
});
