import { describe, expect, it } from "vitest";
import { runDemo } from "./run-demo.ts";

/** With a server named, the tour adds PostgreSQL as a fifth backend; without, it says it skipped it. */
const withPostgres = (process.env["DURABLY_PG_URL"] ?? "").trim() !== "";
const backendCount = withPostgres ? 5 : 4;

describe("npm run demo (the tour)", () => {
  it("runs every step, checks every claim and exits 0", async () => {
    const { code, stdout, stderr } = await runDemo([]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    // Piped, not a TTY: no colour codes and no progress line.
    expect(stdout).not.toContain("\u001b[");
    for (const heading of [
      "1. The experiment on every backend",
      "2. What each backend stored",
      "3. Fault one: a save whose code throws",
      "4. Fault two: a commit cut short",
      "5. A scripted agent run, killed mid-tool and resumed",
    ]) {
      expect(stdout).toContain(heading);
    }
    expect(stdout).toContain(
      `✓ all ${backendCount} backends return identical results (ids, seqs, entries, document)`,
    );
    expect(stdout).toMatch(new RegExp(`vs memory${" +identical".repeat(backendCount)} *$`, "m"));
    if (withPostgres) {
      expect(stdout).not.toContain("PostgreSQL: skipped");
      expect(stdout).toContain("FROM durably.entries WHERE session_key = $1");
      expect(stdout).toContain(
        "✓ PostgreSQL: the notes document has one base (first save) and one delta (second save)",
      );
      expect(stdout).toContain(
        "✓ PostgreSQL: after reopen, the earlier saves and the next one, and still no trace of the faulty one",
      );
    } else {
      expect(stdout).toContain(
        "PostgreSQL: skipped (set DURABLY_PG_URL=postgres://… to a reachable server to include it)",
      );
      expect(stdout).not.toContain("PostgreSQL: the");
    }
    expect(stdout).toContain("SELECT id, conversation_id, commit_seq");
    expect(stdout).toContain("SELECT document_id, seq, kind, content FROM document_revisions");
    expect(stdout).toContain('"type":"commit"');
    expect(stdout).toContain("key ranges");
    expect(stdout).toContain("✓ JSONL: reopening shows the first save intact and the second gone");
    expect(stdout).toContain(
      "✓ SQLite: the writer was SIGKILLed inside its transaction, after its writes",
    );
    expect(stdout).toContain("✓ SQLite: reopening shows the two earlier saves intact");
    expect(stdout).toContain("✓ agent: the child was SIGKILLed while its tool ran");
    expect(stdout).toContain(
      "✓ agent after the kill: the submission settled once, done, with the last entry as its answer",
    );
    expect(stdout).toContain(
      '✓ agent after the kill: the transcript is question, tool call, tool result "5", answer',
    );
    expect(stdout).not.toContain("✗");
    expect(stdout).toMatch(/All \d+ claims checked and held\./);
  });
});

describe("demo commands", () => {
  it("prints the usage for --help", async () => {
    const { code, stdout } = await runDemo(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("Usage: demo [command] [options]");
    expect(stdout).toContain("inspect <path>");
  });

  it("rejects an unknown command with exit code 2 and says what it expected", async () => {
    const { code, stderr, stdout } = await runDemo(["frobnicate"]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain('demo: unknown command "frobnicate"; expected experiment, inspect');
  });
});
