import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { Harness, type ConversationId } from "@durably/core";
import { openPostgresStorage, type PostgresStorage } from "@durably/storage-postgres";
import { CliError } from "../src/cli.ts";
import {
  VIEWER_QUESTION,
  VIEWER_REQUEST_ID,
  viewerHarnessOptions,
} from "../src/serve/demo-agent.ts";
import type { StoragePanel } from "../src/serve/panel/section.ts";
import { describeTarget } from "../src/serve/target.ts";
import { ViewerStorage, type StorageStatus } from "../src/serve/viewer-storage.ts";
import {
  body,
  eventually,
  FAST,
  startInProcess,
  type InProcessViewer,
} from "./support/viewer-fixture.ts";

/** The server the suite may use (a reachable PostgreSQL), or none: then the server cases are skipped. */
const PG_URL = process.env.DURABLY_PG_URL;

let viewer: InProcessViewer | undefined;
let holder: PostgresStorage | undefined;

afterEach(async () => {
  await holder?.close();
  holder = undefined;
  await viewer?.close();
  viewer = undefined;
});

/** A new session holding one finished run of the viewer's scripted agent. */
async function sessionWithRun(
  url: string,
): Promise<{ session: string; conversationId: ConversationId }> {
  const session = `viewer-test-${randomUUID()}`;
  const harness = await Harness.open(
    await openPostgresStorage({ connectionString: url, session }),
    {
      ...viewerHarnessOptions(FAST),
    },
  );
  try {
    const conversation = await harness.createConversation();
    const submission = await conversation.submit({
      type: "input",
      content: VIEWER_QUESTION,
      requestId: VIEWER_REQUEST_ID,
    });
    await submission.wait();
    await harness.whenIdle();
    return { session, conversationId: conversation.id };
  } finally {
    await harness.close();
  }
}

describe("the viewer on a PostgreSQL session", () => {
  it.runIf(PG_URL)("lists its conversations and shows the rows behind one", async () => {
    const url = PG_URL as string;
    const { session, conversationId } = await sessionWithRun(url);
    viewer = await startInProcess({ backend: "postgres", session, url });
    expect(viewer.storage.status.state).toBe("open");
    const list = body<{ conversations: { id: number }[] }>(await viewer.send("/api/conversations"));
    expect(list.conversations.map((c) => c.id)).toContain(conversationId);
    const panel = body<StoragePanel>(
      await viewer.send(`/api/conversations/${conversationId}/storage`),
    );
    const entries = panel.sections[0];
    expect(entries?.title).toBe(
      `SELECT id, commit_seq, record FROM durably.entries WHERE session_key = '${session}' AND conversation_id = ${conversationId} ORDER BY id`,
    );
    expect(entries?.type === "table" && entries.rows).toHaveLength(4);
  });

  it.runIf(PG_URL)(
    "says which owner holds a session and opens it once the owner closes it",
    async () => {
      const url = PG_URL as string;
      const { session, conversationId } = await sessionWithRun(url);
      holder = await openPostgresStorage({
        connectionString: url,
        session,
        owner: "another-app:4242",
      });
      viewer = await startInProcess({ backend: "postgres", session, url }, { retryMs: 100 });
      const status = viewer.storage.status as Extract<StorageStatus, { state: "locked" }>;
      expect(status).toMatchObject({ state: "locked", holder: { owner: "another-app:4242" } });
      expect(status.holderText).toBe('the owner "another-app:4242"');
      expect(status.advice).toContain("A PostgreSQL session has one owner at a time (its lease)");
      await viewer.post("/api/storage/open", { wait: true });
      await holder.close();
      holder = undefined;
      await eventually(
        () => (viewer?.storage.status.state === "open" ? true : undefined),
        "the session to open once its owner closed it",
      );
      const shown = body<{ items: unknown[] }>(
        await viewer.send(`/api/conversations/${conversationId}`),
      );
      expect(shown.items).toHaveLength(4);
    },
  );

  it.runIf(PG_URL)("refuses a session that does not exist, and creates none", async () => {
    const url = PG_URL as string;
    const session = `viewer-missing-${randomUUID()}`;
    const storage = new ViewerStorage({ backend: "postgres", session, url });
    await expect(storage.open()).rejects.toThrow(CliError);
    expect(storage.status).toMatchObject({ state: "failed" });
    expect((storage.status as { message: string }).message).toContain(
      `holds no Durably session ${JSON.stringify(session)} in schema durably`,
    );
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      const rows = await pool.query("SELECT 1 FROM durably.sessions WHERE session_key = $1", [
        session,
      ]);
      expect(rows.rowCount).toBe(0);
    } finally {
      await pool.end();
    }
  });

  it("never shows the password of DURABLY_PG_URL, not even in an error", async () => {
    const url = "postgres://demo:s3cret-pw@127.0.0.1:1/nothing";
    const target = { backend: "postgres" as const, session: "demo:x", url };
    expect(describeTarget(target).location).toBe(
      'postgres://demo@127.0.0.1:1/nothing, schema durably, session_key "demo:x"',
    );
    const storage = new ViewerStorage(target);
    await storage.open().catch(() => undefined);
    expect(storage.status.state).toBe("failed");
    expect(JSON.stringify(storage.status)).not.toContain("s3cret-pw");
    expect(JSON.stringify(storage.status)).toContain("ECONNREFUSED");
  });
});
