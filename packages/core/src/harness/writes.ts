import type { ConversationId, SubmissionId } from "../domain/ids.js";
import { copyJson, type Json } from "../domain/json.js";
import type { SubmissionRecord } from "../domain/records.js";
import type { Transaction } from "../session/transaction.js";
import type { WriteEntry } from "./inbox.js";

const ENTRY_FIELDS = ["kind", "data"];

/**
 * Checks the entry of `submit({ type: "write", entry })`: `{ kind, data? }`,
 * `kind` a non-empty string outside the harness's own `durably.` kinds,
 * `data` JSON. Returns a copy; a `TypeError` names what is wrong.
 */
export function checkWriteEntry(value: unknown): WriteEntry {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new TypeError("submit: entry must be an object { kind, data? }");
  const entry = value as Record<string, unknown>;
  for (const key of Object.keys(entry))
    if (!ENTRY_FIELDS.includes(key))
      throw new TypeError(`submit: entry.${key} is not a write entry field (kind, data)`);
  if (typeof entry.kind !== "string" || entry.kind === "")
    throw new TypeError("submit: entry.kind must be a non-empty string");
  if (entry.kind.startsWith("durably."))
    throw new TypeError(
      `submit: entry.kind ${JSON.stringify(entry.kind)} is reserved (the harness's own kinds start with "durably.")`,
    );
  const data: Json | undefined =
    entry.data === undefined ? undefined : copyJson(entry.data, "submit: entry.data");
  return { kind: entry.kind, ...(data !== undefined ? { data } : {}) };
}

/**
 * Inside the caller's commit: appends a write's entry and settles its
 * submission `done`, the entry being both its `entry` and its `answer`.
 */
export async function appendWrite(
  tx: Transaction,
  conversationId: ConversationId,
  submissionId: SubmissionId,
  write: WriteEntry,
): Promise<SubmissionRecord> {
  const entry = await tx.appendEntry(conversationId, {
    kind: write.kind,
    ...(write.data !== undefined ? { data: write.data } : {}),
  });
  await tx.placeSubmission(submissionId, entry.id);
  return tx.settleSubmission(submissionId, { status: "done", answer: entry.id });
}
