import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { ConversationId, DocumentId, SubmissionId, SubmissionRecord } from "@durably/core";
import { encodeMarker, encodeRecord, type MarkerWrite } from "../../src/line-format.js";

const MiB = 1 << 20;

/** A 1 MiB string that starts with `i`, so every line differs. */
const payload = (i: number) => `${String(i).padStart(8, "0")}${"a".repeat(MiB - 8)}`;

/**
 * Writes a storage directory of valid lines, quickly, with the real format
 * writer: `main.jsonl` of at least `mainBytes`, whose markers replace one
 * submission with a 1 MiB content each (so the index stays small), and
 * `doc-3.jsonl` (a rewindable document) of at least `sidecarBytes`, whose
 * changes are 1 MiB bases. Returns the newest submission content and base.
 */
export function writeLargeStorage(
  path: string,
  sizes: { mainBytes: number; sidecarBytes: number },
): { content: string; base: string } {
  const main = openSync(join(path, "main.jsonl"), "w");
  const doc = openSync(join(path, "doc-3.jsonl"), "w");
  try {
    const create: MarkerWrite[] = [
      { type: "conversation", value: { id: 1 as ConversationId } },
      {
        type: "document.create",
        record: {
          id: 3 as DocumentId,
          kind: "app.big",
          scope: { kind: "conversation", conversationId: 1 as ConversationId },
          history: "rewindable",
        },
        ordinal: 0,
      },
    ];
    const first = { kind: "base" as const, version: 1, value: "" };
    writeSync(
      doc,
      encodeRecord({
        seq: 1,
        call: 1,
        ordinal: 0,
        payload: { type: "document", id: 3, content: first },
      }),
    );
    writeSync(main, encodeMarker({ seq: 1, writes: create, ids: 3 }));
    let mainBytes = 0;
    let sidecarBytes = 0;
    let content = "";
    let base = "";
    for (let seq = 2; mainBytes < sizes.mainBytes || sidecarBytes < sizes.sidecarBytes; seq++) {
      const writes: MarkerWrite[] = [];
      if (mainBytes < sizes.mainBytes) {
        content = payload(seq);
        const submission: SubmissionRecord = {
          id: 2 as SubmissionId,
          conversationId: 1 as ConversationId,
          type: "input",
          status: "queued",
          content,
        };
        writes.push({ type: "submission", value: submission });
      }
      if (sidecarBytes < sizes.sidecarBytes) {
        base = payload(-seq);
        const record = encodeRecord({
          seq,
          call: seq,
          ordinal: 0,
          payload: { type: "document", id: 3, content: { kind: "base", version: 1, value: base } },
        });
        writeSync(doc, record);
        sidecarBytes += record.length; // ASCII: one byte per character
        writes.push({ type: "document.change", id: 3, ordinal: 0 });
      }
      const marker = encodeMarker({ seq, writes });
      writeSync(main, marker);
      mainBytes += marker.length;
    }
    return { content, base };
  } finally {
    closeSync(main);
    closeSync(doc);
  }
}
