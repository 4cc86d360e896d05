import type { ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { parseCommand } from "../src/cli.ts";
import { startHolder } from "./support/holder.ts";
import { runDemo } from "./run-demo.ts";
import { send, sqliteWithRun } from "./support/viewer-fixture.ts";
import { startViewerProcess, type ViewerProcess } from "./support/viewer-process.ts";

describe("demo serve: the command line", () => {
  it("takes an optional path, --port, --host and --notes", () => {
    expect(parseCommand(["serve"])).toEqual({
      kind: "serve",
      path: undefined,
      host: undefined,
      port: undefined,
      notes: undefined,
    });
    expect(
      parseCommand(["serve", "/tmp/x", "--port", "8080", "--host=::1", "--notes", "/tmp/n.txt"]),
    ).toEqual({
      kind: "serve",
      path: "/tmp/x",
      host: "::1",
      port: 8080,
      notes: "/tmp/n.txt",
    });
  });

  it("rejects a second path and a port that is not one", () => {
    expect(() => parseCommand(["serve", "a", "b"])).toThrow(
      /serve takes at most one <path>, got also "b"/,
    );
    for (const port of ["http", "70000", "-1", "8.5"])
      expect(() => parseCommand(["serve", "--port", port])).toThrow(/--port must be a port number/);
  });
});

let dir = "";
let viewer: ViewerProcess | undefined;
let held: ChildProcess | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "durably-viewer-cli-"));
});

afterEach(async () => {
  await viewer?.stop("SIGKILL");
  viewer = undefined;
  held?.kill("SIGKILL");
  held = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe("demo serve: paths that hold no storage", () => {
  it("refuses an empty directory, a text file and a missing path, naming what it looked for and creating nothing", async () => {
    const empty = join(dir, "empty");
    await mkdir(empty);
    const text = join(dir, "notes.txt");
    await writeFile(text, "not a database\n");
    const missing = join(dir, "missing");
    const cases: [string, string][] = [
      [
        empty,
        "no Durably storage found (looked for main.jsonl, LevelDB CURRENT and LOCK files, durably.sqlite)",
      ],
      [text, 'not a SQLite database (no "SQLite format 3" header)'],
      [missing, "no such file or directory"],
    ];
    for (const [path, message] of cases) {
      const { code, stdout, stderr } = await runDemo(["serve", path]);
      expect(code, path).toBe(2);
      expect(stdout, path).toBe("");
      expect(stderr, path).toContain(`demo: ${path}: ${message}`);
    }
    expect(await readdir(empty)).toEqual([]);
    expect((await stat(text)).size).toBe("not a database\n".length);
    await expect(stat(missing)).rejects.toThrow(/ENOENT/);
  });

  it("refuses a PostgreSQL session without DURABLY_PG_URL", async () => {
    const { code, stderr } = await runDemo(["serve", "postgres:demo:x"], {
      DURABLY_PG_URL: undefined,
    });
    expect(code).toBe(2);
    expect(stderr).toContain("postgres:demo:x: a PostgreSQL session needs DURABLY_PG_URL set");
  });
});

describe("demo serve: serving", () => {
  it("prints a loopback URL with its token, serves the storage, and on SIGTERM closes it for others", async () => {
    const { file } = await sqliteWithRun(dir);
    viewer = await startViewerProcess([dir]);
    expect(viewer.stdout()).toContain(`Durably viewer: SQLite storage at ${file}`);
    expect(viewer.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}$/);
    const status = await send(viewer.port, "/api/status", {
      headers: { cookie: `durably_viewer_${viewer.port}=${viewer.token}` },
    });
    expect(JSON.parse(status.body)).toMatchObject({
      storage: { backend: "sqlite", location: file },
      status: { state: "open" },
    });
    expect(await viewer.stop("SIGTERM")).toEqual({ code: 0, signal: null });
    expect(viewer.stdout()).toContain("Stopping (SIGTERM): closing the storage…\nStopped.");
    const again = await openSqliteStorage(file); // the lock is free
    await again.close();
  });

  it("serves a storage another process has open, saying which process holds it", async () => {
    await sqliteWithRun(dir);
    held = await startHolder("sqlite", dir);
    viewer = await startViewerProcess([dir]);
    expect(viewer.stdout()).toContain(
      `The storage is locked: process ${held.pid} (node) has it open.`,
    );
    expect(viewer.stdout()).toContain("The page offers to open it as soon as the lock is free.");
    const status = await send(viewer.port, "/api/status", {
      headers: { cookie: `durably_viewer_${viewer.port}=${viewer.token}` },
    });
    expect(JSON.parse(status.body)).toMatchObject({
      status: { state: "locked", holder: { pid: held.pid } },
    });
  });

  it("a port already in use is an error naming it; nothing is served", async () => {
    viewer = await startViewerProcess([]);
    const { code, stdout, stderr } = await runDemo(["serve", "--port", String(viewer.port)]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain(`EADDRINUSE: address already in use 127.0.0.1:${viewer.port}`);
  });

  it("without a path, serves a fresh memory storage", async () => {
    viewer = await startViewerProcess([]);
    expect(viewer.stdout()).toContain("Durably viewer: memory storage at this process's memory");
    expect(await viewer.stop("SIGINT")).toEqual({ code: 0, signal: null });
  });
});
