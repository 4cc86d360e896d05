import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { parseCommand } from "../src/cli.ts";

const APP = fileURLToPath(new URL("..", import.meta.url));
const PROMPT = "needs your approval";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `demo agent --approve --dir <where>` as a real child process. When
 * the prompt appears it writes `answer.line` to its stdin, closes stdin
 * (`"close"`), or SIGKILLs it (`"kill"`).
 */
function runApprove(where: string, answer: { line: string } | "close" | "kill"): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--conditions=@durably/source",
        "--import",
        "tsx",
        "src/main.ts",
        "agent",
        "--approve",
        "--dir",
        where,
      ],
      { cwd: APP, env: { ...process.env, NO_COLOR: "1" }, stdio: ["pipe", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    let asked = false;
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (asked || !stdout.includes(PROMPT)) return;
      asked = true;
      if (answer === "kill") child.kill("SIGKILL");
      else if (answer === "close") child.stdin.end();
      else child.stdin.end(`${answer.line}\n`);
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** What the run's SQLite file holds: entry kinds, the tool task's state and the live slot's status. */
async function stored(where: string) {
  const storage = await openSqliteStorage(join(where, "durably.sqlite"));
  try {
    const entries = (
      await storage.scanEntries({ conversationId: 1 as never, order: "ascending" }, 100)
    ).items;
    const tasks = (await storage.scanTasks({ kind: "durably.tool" }, 10)).items;
    return { entries, tool: tasks[0] };
  } finally {
    await storage.close();
  }
}

describe("demo agent --approve", () => {
  it("asks on the terminal; killed while it asks, the call still waits; approved on the next run, the note is saved once", async () => {
    dir = mkdtempSync(join(tmpdir(), "durably-demo-approve-"));
    const where = join(dir, "run");
    const killed = await runApprove(where, "kill");
    expect(killed.signal).toBe("SIGKILL");
    expect(killed.stdout).toContain('→ save_note({"text":"2 + 3 = 5"})');
    const afterKill = await stored(where);
    expect(afterKill.entries.map((e) => e.kind)).toEqual(["durably.user", "durably.assistant"]);
    expect(afterKill.tool?.state).toEqual({ status: "pending", checkpoint: { phase: "approval" } });
    expect(existsSync(join(where, "notes.txt"))).toBe(false);

    // Input closed while it asks: nothing decided, the call still waits.
    const closed = await runApprove(where, "close");
    expect(closed.code).toBe(1);
    expect(closed.stdout).toContain("the call stays waiting");
    expect((await stored(where)).tool?.state.status).toBe("pending");

    const approved = await runApprove(where, { line: "y" });
    expect(approved.stderr).toBe("");
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain("✓ approved");
    expect(approved.stdout).toContain("← save_note: saved to notes.txt");
    expect(approved.stdout).toContain("Answered");
    expect(readFileSync(join(where, "notes.txt"), "utf8")).toBe("2 + 3 = 5\n");
    const final = await stored(where);
    expect(final.entries.map((e) => e.kind)).toEqual([
      "durably.user",
      "durably.assistant",
      "durably.approval",
      "durably.tool-result",
      "durably.assistant",
    ]);

    // Run again: already answered, nothing asked, nothing saved twice.
    const again = await runApprove(where, { line: "y" });
    expect(again.code).toBe(0);
    expect(again.stdout).not.toContain(PROMPT);
    expect(readFileSync(join(where, "notes.txt"), "utf8")).toBe("2 + 3 = 5\n");
  }, 90_000);

  it("a typed reason denies the call: the model gets 'denied: <reason>' and nothing is saved", async () => {
    dir = mkdtempSync(join(tmpdir(), "durably-demo-approve-"));
    const where = join(dir, "run");
    const denied = await runApprove(where, { line: "not on Fridays" });
    expect(denied.code).toBe(0);
    expect(denied.stdout).toContain("✗ denied: not on Fridays");
    expect(denied.stdout).toContain("← save_note: denied: not on Fridays (error)");
    expect(existsSync(join(where, "notes.txt"))).toBe(false);
    const result = (await stored(where)).entries.find((e) => e.kind === "durably.tool-result");
    expect(result?.model?.[0]).toMatchObject({ content: "denied: not on Fridays", isError: true });
  }, 60_000);

  it("reads --approve with its options", () => {
    expect(parseCommand(["agent", "--approve"])).toEqual({
      kind: "agent-approve",
      options: {
        dir: "durably-agent-approve",
        question: "What is 2 + 3? Save the answer as a note.",
      },
    });
    expect(
      parseCommand([
        "agent",
        "--approve",
        "--base-url",
        "http://localhost:11434/v1",
        "--model",
        "q",
        "--dir",
        "d",
      ]),
    ).toMatchObject({
      kind: "agent-approve",
      options: { dir: "d", live: { provider: "openai-compatible", model: "q" } },
    });
    expect(() => parseCommand(["agent", "--approve", "--keep"])).toThrow(
      "agent --approve keeps its run in --dir; drop --keep",
    );
    expect(() => parseCommand(["agent", "--approve", "--model", "q"])).toThrow(
      "agent --approve --model needs --base-url <url> or --provider openai",
    );
  });
});
