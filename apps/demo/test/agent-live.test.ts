import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  startOpenAiTestServer,
  type OpenAiTestServer,
  type OpenAiTestServerOptions,
} from "@durably/contract-tests";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { parseCommand } from "../src/cli.ts";
import { runDemo } from "./run-demo.ts";

const APP = fileURLToPath(new URL("..", import.meta.url));
const KEY = "sk-demo-agent-key-5f1e2d3c4b5a";
const ANSWER = "The sum of 2 and 3 is 5, as the add tool confirmed; ".repeat(6).trim();

let server: OpenAiTestServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  server = undefined;
  dir = undefined;
});

async function setUp(options: OpenAiTestServerOptions = {}) {
  server = await startOpenAiTestServer({
    turns: [
      { text: "Let me add. ", toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] },
      { text: ANSWER },
    ],
    chunkSize: 2,
    ...options,
  });
  dir = mkdtempSync(join(tmpdir(), "durably-demo-agent-"));
  return { url: server.url, dir };
}

const args = (url: string, where: string) => [
  "agent",
  "--base-url",
  url,
  "--model",
  "scripted",
  "--dir",
  where,
];

/** Starts the demo and SIGKILLs it once its output contains `marker`; resolves with the output so far. */
function killWhen(
  argv: readonly string[],
  marker: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--conditions=@durably/source", "--import", "tsx", "src/main.ts", ...argv],
      { cwd: APP, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (stdout.includes(marker)) child.kill("SIGKILL");
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (_code, signal) => {
      clearTimeout(timer);
      if (signal === "SIGKILL" && stdout.includes(marker)) resolve(stdout);
      else
        reject(
          new Error(`the demo ended (${signal}) before printing ${marker}:\n${stdout}\n${stderr}`),
        );
    });
  });
}

function storedBytes(where: string): string {
  return readdirSync(where)
    .map((name) => readFileSync(join(where, name)).toString("latin1"))
    .join("\n");
}

describe("demo agent on a real model (a local OpenAI-compatible server)", () => {
  it("runs the durable agent, printing the transcript as it streams", async () => {
    const { url, dir: where } = await setUp();
    const result = await runDemo(args(url, where), { [`DURABLY_AGENT_API_KEY`]: KEY });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("A durable agent on scripted at");
    expect(result.stdout).toContain("you: What is 2 + 3?");
    expect(result.stdout).toContain('→ add({"a":2,"b":3})');
    expect(result.stdout).toContain("← add: 5");
    expect(result.stdout).toContain(`assistant: ${ANSWER}`);
    expect(result.stdout).toContain("Answered");
    const first = server?.requests[0];
    expect(first?.body.messages?.[0]).toMatchObject({ role: "system" });
    expect(String(first?.body.messages?.[0]?.content)).toContain("call the add tool");
    expect(first?.headers.authorization).toBe(`Bearer ${KEY}`);
    // The key reached the server only: not the output, not a byte of storage.
    expect(result.stdout).not.toContain(KEY);
    expect(storedBytes(where)).not.toContain(KEY);
  });

  it("killed mid-answer and run again, it resumes and the question is answered once", async () => {
    const { url, dir: where } = await setUp({ chunkDelayMs: 15 });
    const killed = await killWhen(args(url, where), "The sum of 2 and 3", {});
    expect(killed).toContain("← add: 5");
    const again = await runDemo(args(url, where));
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("(resuming the answer an earlier run started)");
    expect(again.stdout).toContain(ANSWER);
    const storage = await openSqliteStorage(join(where, "durably.sqlite"));
    try {
      const entries = (
        await storage.scanEntries({ conversationId: 1 as never, order: "ascending" }, 100)
      ).items;
      expect(entries.map((e) => e.kind)).toEqual([
        "durably.user",
        "durably.assistant",
        "durably.tool-result",
        "durably.assistant",
      ]);
      const submissionId = (entries[0]?.data as { submissionId: number }).submissionId;
      const settled = await storage.submission(submissionId as never);
      expect(settled).toMatchObject({ status: "done", answer: entries[3]?.id });
      const answer = entries[3]?.model?.[0];
      expect(answer?.role === "assistant" && answer.content).toEqual([
        { type: "text", text: ANSWER },
      ]);
    } finally {
      await storage.close();
    }
    // A third run finds the question answered and says so.
    const third = await runDemo(args(url, where));
    expect(third.code).toBe(0);
    expect(third.stdout).toContain("settled by an earlier run");
  }, 60_000);

  it("shows a rate-limited call being retried, then answers", async () => {
    const { url, dir: where } = await setUp({
      turns: [
        {
          text: "fine",
          failures: [{ message: "Rate limit reached", retryable: true, retryAfterMs: 1000 }],
        },
      ],
    });
    const result = await runDemo(args(url, where));
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/retrying: attempt 2 of 5 in 1 s \(Rate limit reached\)/);
    expect(result.stdout).toContain("assistant: fine");
  });

  it("a model the server does not have ends unanswered with the server's message, exit 1", async () => {
    const { url, dir: where } = await setUp({
      turns: [{ error: { message: "model 'nope' not found", kind: "invalid", code: "HTTP_404" } }],
    });
    const result = await runDemo(args(url, where));
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("Unanswered: model-error: model 'nope' not found");
  });

  it("--provider openai without OPENAI_API_KEY is a usage error", async () => {
    const result = await runDemo(["agent", "--provider", "openai", "--model", "gpt-5-mini"], {
      OPENAI_API_KEY: "",
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("agent --provider openai needs OPENAI_API_KEY");
  });
});

describe("demo agent command line", () => {
  it("keeps the scripted run by default and reads the real-model options", () => {
    expect(parseCommand(["agent"])).toEqual({ kind: "agent", keep: false });
    expect(
      parseCommand(["agent", "--base-url", "http://localhost:11434/v1", "--model", "qwen2.5"]),
    ).toEqual({
      kind: "agent-live",
      options: {
        provider: "openai-compatible",
        baseUrl: "http://localhost:11434/v1",
        model: "qwen2.5",
        dir: "durably-agent",
        question: "What is 2 + 3?",
      },
    });
    expect(
      parseCommand(["agent", "--provider=openai", "--model", "gpt-5-mini", "--dir", "d"]),
    ).toMatchObject({
      kind: "agent-live",
      options: { provider: "openai", baseUrl: undefined, dir: "d" },
    });
  });

  it("refuses incomplete or unknown real-model options", () => {
    expect(() => parseCommand(["agent", "--model", "m"])).toThrow(
      /needs --base-url <url> or --provider openai/,
    );
    expect(() => parseCommand(["agent", "--base-url", "http://x/v1"])).toThrow(/needs --model/);
    expect(() => parseCommand(["agent", "--provider", "anthropic", "--model", "m"])).toThrow(
      /unknown --provider "anthropic"/,
    );
    expect(() =>
      parseCommand(["agent", "--keep", "--base-url", "http://x", "--model", "m"]),
    ).toThrow(/--keep is for the scripted run/);
  });
});
