import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDemo } from "./run-demo.ts";

describe("demo experiment, then demo inspect", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "durably-demo-inspect-"));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  for (const [backend, title] of [
    ["sqlite", "SQLite"],
    ["jsonl", "JSONL"],
    ["store", "Store (LevelDB)"],
  ] as const) {
    it(`finds what the experiment stored on ${backend} by detecting the backend`, async () => {
      const dir = join(root, backend);
      const experiment = await runDemo(["experiment", "--backend", backend, "--dir", dir]);
      expect(experiment.stderr).toBe("");
      expect(experiment.code).toBe(0);
      expect(experiment.stdout).not.toContain("✗");

      const inspect = await runDemo(["inspect", dir]);
      expect(inspect.stderr).toBe("");
      expect(inspect.code).toBe(0);
      expect(inspect.stdout).toContain(`${title} storage at`);
      expect(inspect.stdout).toContain("conversations (2)");
      expect(inspect.stdout).toContain("entries (2)");
      expect(inspect.stdout).toMatch(/note +"hello"/);
      expect(inspect.stdout).toMatch(/note +"goodbye"/);
      expect(inspect.stdout).toContain('{"text":"after goodbye"}');
      expect(inspect.stdout).toContain("tasks (0)");
    });
  }

  it("says clearly when a path holds no Durably storage", async () => {
    const { code, stderr } = await runDemo(["inspect", root]);
    expect(code).toBe(2);
    expect(stderr).toContain("no Durably storage found");
  });

  it("refuses to run the experiment into a directory that already holds something", async () => {
    const { code, stderr } = await runDemo(["experiment", "--backend", "jsonl", "--dir", root]);
    expect(code).toBe(2);
    expect(stderr).toContain("is not empty");
  });
});
