#!/usr/bin/env node
// `npm run version-packages`: `changeset version`, minus one surprise.
//
// The adapters take @durably/core as a peer dependency (`workspace:^`,
// published as `^<core version>`). While core is 0.x, a minor of core leaves
// that range, and Changesets 2 then bumps every peer dependent a *major*:
// 0.1.0 becomes 1.0.0, a stable release nobody asked for. In 0.x a minor is
// the breaking bump, so this script runs `changeset version` and turns each
// such 0.x -> 1.0.0 jump, where no changeset asked for a major of that
// package, into the next minor (package.json and CHANGELOG.md heading).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The packages a changeset file bumps, with the bump type. */
export function changesetBumps(text) {
  const match = /^---\n([\s\S]*?)\n---/.exec(text);
  if (!match) return [];
  return match[1]
    .split("\n")
    .map((line) => /^\s*["']?([^"':]+)["']?\s*:\s*(major|minor|patch|none)\s*$/.exec(line))
    .filter(Boolean)
    .map(([, name, type]) => ({ name, type }));
}

function workspacePackages(root) {
  const found = [];
  for (const group of ["packages", "apps", "tooling"]) {
    const dir = path.join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name, "package.json");
      if (existsSync(file)) found.push({ dir: path.join(dir, name), file });
    }
  }
  return found.map((p) => ({ ...p, json: JSON.parse(readFileSync(p.file, "utf8")) }));
}

/** 0.x -> >=1.0.0 jumps no changeset asked for, as { name, from, to, instead }. */
export function unaskedMajors(before, after, bumps) {
  const askedMajor = new Set(bumps.filter((b) => b.type === "major").map((b) => b.name));
  const fixes = [];
  for (const [name, from] of before) {
    const to = after.get(name);
    if (to === undefined || askedMajor.has(name)) continue;
    const [major, minor] = from.split(".").map(Number);
    if (major === 0 && Number(to.split(".")[0]) >= 1)
      fixes.push({ name, from, to, instead: `0.${minor + 1}.0` });
  }
  return fixes;
}

export function versionPackages(
  root,
  changeset = [path.join(root, "node_modules", ".bin", "changeset"), "version"],
) {
  const changesetDir = path.join(root, ".changeset");
  const bumps = readdirSync(changesetDir)
    .filter((f) => f.endsWith(".md") && f !== "README.md")
    .flatMap((f) => changesetBumps(readFileSync(path.join(changesetDir, f), "utf8")));
  const before = new Map(workspacePackages(root).map((p) => [p.json.name, p.json.version]));
  const result = spawnSync(changeset[0], changeset.slice(1), {
    cwd: root,
    stdio: "inherit",
    shell: process.platform === "win32",
  });
  if (result.status !== 0) throw new Error(`${changeset.join(" ")} failed (exit ${result.status})`);
  const packages = workspacePackages(root);
  const after = new Map(packages.map((p) => [p.json.name, p.json.version]));
  const fixes = unaskedMajors(before, after, bumps);
  for (const fix of fixes) {
    const pkg = packages.find((p) => p.json.name === fix.name);
    const text = readFileSync(pkg.file, "utf8");
    writeFileSync(pkg.file, text.replace(`"version": "${fix.to}"`, `"version": "${fix.instead}"`));
    const changelog = path.join(pkg.dir, "CHANGELOG.md");
    if (existsSync(changelog))
      writeFileSync(
        changelog,
        readFileSync(changelog, "utf8").replace(`\n## ${fix.to}\n`, `\n## ${fix.instead}\n`),
      );
    console.log(`${fix.name}: ${fix.from} -> ${fix.instead} (changesets said ${fix.to})`);
  }
  return fixes;
}

const invoked =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invoked) versionPackages(path.resolve(path.dirname(fileURLToPath(import.meta.url)), ".."));
