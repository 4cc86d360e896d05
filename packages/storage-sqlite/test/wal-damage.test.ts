import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ConversationId } from "@durably/core";
import { openSqliteStorage } from "../src/index.js";
import { spawnChild } from "./child-process.js";
import { commitRoot, databasePerTest } from "./helpers.js";

const COMMITS = 60;
/** A WAL frame: a 24-byte header and one page (the default 4096 bytes); the file starts with a 32-byte header. */
const FRAME = 24 + 4096;

const database = databasePerTest("wal.sqlite", commitRoot);

describe("WAL damage is SQLite's own recovery (a documented limit)", () => {
  it("a flipped byte in the WAL of a killed process loses that commit and every later one without an error: the survivors are a prefix", async () => {
    const { path } = database;
    const child = spawnChild("commit-then-hold.ts", [path, String(COMMITS)]);
    await child.waitFor(/^committed /);
    child.process.kill("SIGKILL");
    await child.exited;
    const wal = readFileSync(`${path}-wal`);
    const frames = Math.floor((wal.length - 32) / FRAME);
    expect(frames).toBeGreaterThan(COMMITS);
    // One byte in the page data of a frame in the middle of the log.
    const at = 32 + Math.floor(frames / 2) * FRAME + 24 + 100;
    wal[at] = (wal[at] as number) ^ 0x01;
    writeFileSync(`${path}-wal`, wal);

    const storage = await openSqliteStorage(path);
    const page = await storage.scanEntries(
      { conversationId: 1 as ConversationId, order: "ascending" },
      1000,
    );
    await storage.close();
    const ids = page.items.map((e) => e.id as number);
    // Some acknowledged commits are gone, silently...
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThan(COMMITS);
    // ...but what is left is exactly the first ones, whole: a prefix, never a hole.
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => 1000 + i));
  });
});
