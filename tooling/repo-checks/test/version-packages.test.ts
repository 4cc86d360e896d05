/**
 * `npm run version-packages` on a small workspace shaped like ours (core,
 * an adapter with core as a `workspace:^` peer, this repository's changesets
 * config): a minor of core in 0.x releases the adapter as the next minor,
 * where Changesets alone would make it 1.0.0.
 */
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  changesetBumps,
  unaskedMajors,
  versionPackages,
} from "../../../scripts/version-packages.mjs";
import { ROOT } from "../src/repo.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** core and an adapter at `version`, with a pending changeset of `changeset`. */
function workspace(version: string, changeset: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "durably-version-"));
  dirs.push(dir);
  write(path.join(dir, "package.json"), JSON.stringify({ name: "root", private: true }));
  write(path.join(dir, "pnpm-workspace.yaml"), "packages:\n  - packages/*\n");
  write(
    path.join(dir, "packages/core/package.json"),
    `${JSON.stringify({ name: "@durably/core", version }, null, 2)}\n`,
  );
  write(
    path.join(dir, "packages/adapter/package.json"),
    `${JSON.stringify(
      { name: "@durably/adapter", version, peerDependencies: { "@durably/core": "workspace:^" } },
      null,
      2,
    )}\n`,
  );
  copyFileSync(path.join(ROOT, ".changeset/config.json"), path.join(dir, ".changeset-config.json"));
  const config = JSON.parse(readFileSync(path.join(dir, ".changeset-config.json"), "utf8")) as {
    ignore: string[];
  };
  config.ignore = [];
  write(path.join(dir, ".changeset/config.json"), JSON.stringify(config));
  write(path.join(dir, ".changeset/change.md"), `---\n${changeset}\n---\n\nA change.\n`);
  symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, stdio: "pipe" });
  git("init", "-q");
  git("add", "-A");
  git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "fixture");
  return dir;
}

const versionOf = (dir: string, pkg: string) =>
  (
    JSON.parse(readFileSync(path.join(dir, "packages", pkg, "package.json"), "utf8")) as {
      version: string;
    }
  ).version;

describe("version-packages", () => {
  it("reads the bumps of a changeset", () => {
    expect(
      changesetBumps("---\n\"@durably/core\": minor\n'@durably/x': patch\n---\n\nText: major\n"),
    ).toEqual([
      { name: "@durably/core", type: "minor" },
      { name: "@durably/x", type: "patch" },
    ]);
  });

  it("finds 0.x packages that jumped to 1.0.0 unasked, and leaves asked majors alone", () => {
    const before = new Map([
      ["a", "0.1.0"],
      ["b", "0.3.2"],
      ["c", "0.1.0"],
    ]);
    const after = new Map([
      ["a", "1.0.0"],
      ["b", "1.0.0"],
      ["c", "0.2.0"],
    ]);
    expect(unaskedMajors(before, after, [{ name: "b", type: "major" }])).toEqual([
      { name: "a", from: "0.1.0", to: "1.0.0", instead: "0.2.0" },
    ]);
  });

  it(
    "a minor of core in 0.x releases its peer dependents as the next minor, not 1.0.0",
    { timeout: 120_000 },
    () => {
      const dir = workspace("0.1.0", '"@durably/core": minor');
      const fixes = versionPackages(dir);
      expect(versionOf(dir, "core")).toBe("0.2.0");
      expect(versionOf(dir, "adapter")).toBe("0.2.0");
      expect(fixes).toEqual([
        { name: "@durably/adapter", from: "0.1.0", to: "1.0.0", instead: "0.2.0" },
      ]);
      expect(readFileSync(path.join(dir, "packages/adapter/CHANGELOG.md"), "utf8")).toContain(
        "\n## 0.2.0\n",
      );
    },
  );

  it("a patch of core leaves the adapter's range intact", { timeout: 120_000 }, () => {
    const dir = workspace("0.1.0", '"@durably/core": patch');
    expect(versionPackages(dir)).toEqual([]);
    expect(versionOf(dir, "core")).toBe("0.1.1");
    expect(versionOf(dir, "adapter")).toBe("0.1.0");
  });
});
