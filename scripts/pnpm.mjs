#!/usr/bin/env node
// Runs the pinned pnpm (the version in package.json "packageManager") on a
// machine that only has node and npm. pnpm is installed once into .tools/
// (gitignored) and its bin folder is put first on PATH, so tools that spawn
// `pnpm` themselves (turbo) find the same pinned version.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const manifest = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
const spec = manifest.packageManager;
const match = /^pnpm@(\d+\.\d+\.\d+)$/.exec(spec ?? "");
if (!match) {
  console.error(`scripts/pnpm.mjs: package.json packageManager must be "pnpm@x.y.z", got ${spec}`);
  process.exit(1);
}
const version = match[1];
const tools = path.join(root, ".tools");
const binDir = path.join(tools, "node_modules", ".bin");
const pnpmBin = path.join(binDir, process.platform === "win32" ? "pnpm.cmd" : "pnpm");

function installedVersion() {
  try {
    const pkg = path.join(tools, "node_modules", "pnpm", "package.json");
    return JSON.parse(readFileSync(pkg, "utf8")).version;
  } catch {
    return undefined;
  }
}

if (installedVersion() !== version || !existsSync(pnpmBin)) {
  console.error(`scripts/pnpm.mjs: installing pnpm@${version} into .tools/`);
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const result = spawnSync(
    npm,
    [
      "install",
      "--no-save",
      "--no-package-lock",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      "--prefix",
      tools,
      `pnpm@${version}`,
    ],
    { stdio: "inherit", shell: process.platform === "win32" },
  );
  if (result.status !== 0 || installedVersion() !== version) {
    console.error(`scripts/pnpm.mjs: could not install pnpm@${version}`);
    process.exit(result.status || 1);
  }
}

const env = { ...process.env };
const pathKey = Object.keys(env).find((k) => k.toUpperCase() === "PATH") ?? "PATH";
env[pathKey] = [binDir, env[pathKey]].filter(Boolean).join(path.delimiter);
env.TURBO_TELEMETRY_DISABLED = "1";
env.TURBO_NO_UPDATE_NOTIFIER = "1";
// better-sqlite3: skip prebuild-install's download attempt and compile with node-gyp.
env.npm_config_build_from_source ??= "better-sqlite3";
// Build native addons against the local Node headers instead of downloading them.
if (!env.npm_config_nodedir && existsSync("/usr/include/node/node.h")) {
  env.npm_config_nodedir = "/usr";
}

const result = spawnSync(pnpmBin, process.argv.slice(2), {
  stdio: "inherit",
  env,
  shell: process.platform === "win32",
});
if (result.error) {
  console.error(result.error.message);
  process.exit(1);
}
process.exit(result.status ?? (result.signal ? 1 : 0));
