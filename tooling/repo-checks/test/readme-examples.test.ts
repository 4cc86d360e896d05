/**
 * Every README example stays true: the TypeScript blocks tagged `example`
 * (complete programs) and `typecheck` (complete test modules) of the root
 * README, docs/ and the published packages' Markdown are written out,
 * typechecked strictly against the built packages, and the examples run in
 * a fresh directory each, the way a user would run them.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemTool } from "../../../scripts/system-tools.mjs";
import { codeBlocks } from "../src/markdown.ts";
import { documentationFiles } from "../src/repo.ts";
import { describeRun, run } from "../src/run.ts";

const require = createRequire(import.meta.url);
/** Inside this package, so the blocks resolve the workspace packages and the root's dev tools. */
const OUT = path.join(import.meta.dirname, "..", ".examples");
const blocks = documentationFiles().flatMap(codeBlocks);
const examples = blocks.filter((b) => b.kind === "example");
const postgres = systemTool("postgresql");
const pgUrl = process.env.DURABLY_PG_URL ?? "";

beforeAll(() => {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  for (const block of blocks) writeFileSync(path.join(OUT, block.fileName), block.code);
  writeFileSync(
    path.join(OUT, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: "ES2022",
        module: "nodenext",
        moduleResolution: "nodenext",
        skipLibCheck: false,
        noEmit: true,
        types: ["node"],
      },
      include: ["*.ts"],
    }),
  );
});
afterAll(() => rmSync(OUT, { recursive: true, force: true }));

describe("README examples", () => {
  it("there are examples to check (the tags were not lost)", () => {
    expect(examples.length).toBeGreaterThanOrEqual(5);
    expect(blocks.map((b) => b.where)).toContainEqual(
      expect.stringMatching(/^packages\/core\/README\.md:/),
    );
  });

  it("every tagged block typechecks with strict tsc against the built packages, skipLibCheck off", async () => {
    const tsc = require.resolve("typescript/bin/tsc");
    const result = await run(process.execPath, [tsc, "-p", OUT], { cwd: OUT });
    expect(result.code, describeRun("tsc", result)).toBe(0);
  });

  for (const block of examples) {
    const needsPostgres = /from "(pg|@durably\/storage-postgres)"/.test(block.code);
    const skip =
      needsPostgres && pgUrl === ""
        ? `no server (${postgres.available ? "DURABLY_PG_URL unset" : postgres.reason})`
        : "";
    it.skipIf(skip !== "")(
      `${block.where} runs and exits 0${skip ? ` (skipped: ${skip})` : ""}`,
      async () => {
        const cwd = mkdtempSync(path.join(tmpdir(), "durably-example-"));
        try {
          const result = await run(
            process.execPath,
            ["--import", require.resolve("tsx"), path.join(OUT, block.fileName)],
            { cwd, env: { ...process.env, DATABASE_URL: pgUrl }, timeoutMs: 120_000 },
          );
          expect(result.code, describeRun(block.where, result)).toBe(0);
          expect(result.stderr, `${block.where} wrote to stderr`).toBe("");
          if (block.output !== undefined)
            expect(result.stdout.trimEnd()).toBe(block.output.trimEnd());
        } finally {
          rmSync(cwd, { recursive: true, force: true });
        }
      },
    );
  }
});
