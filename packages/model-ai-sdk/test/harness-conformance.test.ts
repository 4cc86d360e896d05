import {
  registerHarnessConformance,
  startOpenAiTestServer,
  type OpenAiTestServer,
} from "@durably/contract-tests";
import type { Storage } from "@durably/core";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { httpModels, SERVER_URL_ENV } from "./support/http-models.js";

// The whole harness conformance suite, including the SIGKILL scenarios
// (mid-stream, mid-tool, mid-retry-wait, mid-compaction, mid-api.commit), with every model call going
// through aiSdkModel → @ai-sdk/openai-compatible → real HTTP and SSE → a
// scripted OpenAI-compatible server on 127.0.0.1, over SQLite. The crash
// child reaches the same server (its URL in the environment).
let server: OpenAiTestServer | undefined;
beforeAll(async () => {
  server = await startOpenAiTestServer();
  process.env[SERVER_URL_ENV] = server.url;
});
afterAll(async () => {
  await server?.close();
  delete process.env[SERVER_URL_ENV];
});

const url = (): string => {
  if (!server) throw new Error("the scripted server is not running");
  return server.url;
};

registerHarnessConformance({ describe, it }, "aiSdkModel over HTTP, SQLite", {
  persistent: true,
  models: httpModels(url),
  factory: async (use) => {
    const dir = mkdtempSync(join(tmpdir(), "durably-ai-sdk-harness-"));
    const path = join(dir, "storage.sqlite");
    let current: Storage = await openSqliteStorage(path);
    try {
      await use(current, async () => {
        await current.close();
        current = await openSqliteStorage(path);
        return current;
      });
    } finally {
      await current.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
  crash: {
    childModule: new URL("./crash/open-sqlite.ts", import.meta.url),
    modelModule: new URL("./crash/model-child.ts", import.meta.url),
    open: (path) => openSqliteStorage(path),
    nodeArgs: ["--conditions=@durably/source", "--import", "tsx"],
  },
});

describe("aiSdkModel over HTTP, SQLite > the suite's model calls", () => {
  it("went over HTTP, the crash children's included", () => {
    const requests = server?.requests ?? [];
    // The turn each call asked for, by crash scenario: the child's first call
    // (turn 0) is the only turn-0 call of the tool scenarios, so seeing it
    // proves the child's model went over HTTP too.
    const expected: Record<string, number[]> = {
      stream: [0, 0, 1], // child (killed mid-stream), parent's rerun, parent's answer
      "safe-tool": [0, 1],
      "unsafe-tool": [0, 1],
      "retry-wait": [0, 0, 1], // child's failed call, parent's retry, parent's answer
      // child: q1, q2, the summary it was killed in (-1: a compaction request); parent: the
      // summary again, then q3 (the request holds the summary, q2, a2, q3: turn 1).
      compaction: [0, 1, -1, -1, 1],
      "tool-commit": [0, 1], // child's call (killed inside the tool), parent's answer
    };
    for (const [scenario, turns] of Object.entries(expected)) {
      const got = requests
        .filter((r) => String(r.headers["x-durably-script-id"]).startsWith(`${scenario}-`))
        .map((r) => r.turn);
      if (JSON.stringify(got) !== JSON.stringify(turns))
        throw new Error(
          `scenario ${scenario}: expected model calls for turns ${JSON.stringify(turns)} over HTTP, got ${JSON.stringify(got)}`,
        );
    }
  });
});
