import { StorageRequestError } from "../domain/errors.js";
import type { SubmissionStatus, TaskStatus } from "../domain/records.js";
import type {
  ConversationFilter,
  DocumentFilter,
  SubmissionFilter,
  TaskFilter,
} from "./backend.js";
import type { Cursor, Order } from "./port.js";
import { idField, oneOfField } from "./query-fields.js";
import { checkAt, checkLimit, checkQuery, decodeIdCursor } from "./requests.js";
import { checkScope } from "./scope.js";

const TASK_STATUSES: readonly TaskStatus[] = [
  "pending",
  "running",
  "waiting",
  "completing",
  "terminal",
];
const SUBMISSION_STATUSES: readonly SubmissionStatus[] = ["queued", "placed", "done", "unanswered"];
const BOOLEANS = [true, false] as const;

/** A scan request after every check: the typed filter, the order and where the page starts. */
export interface CheckedScan<F> {
  scan: string;
  filter: F;
  order: Order;
  after: number | undefined;
  limit: number;
}

function checked<F>(
  scan: string,
  query: object,
  limit: number,
  cursor: Cursor | undefined,
  order: Order,
  filter: F,
): CheckedScan<F> {
  return { scan, filter, order, after: decodeIdCursor(scan, query, cursor), limit };
}

export function conversationScan(
  query: unknown,
  limit: unknown,
  cursor: Cursor | undefined,
): CheckedScan<ConversationFilter> {
  const scan = "scanConversations";
  const max = checkLimit(limit);
  const order = checkQuery(scan, query, ["ownerTaskId"], "ascending");
  const q = query as object;
  const ownerTaskId = idField(scan, q, "ownerTaskId", false);
  return checked(scan, q, max, cursor, order, ownerTaskId === undefined ? {} : { ownerTaskId });
}

/** An entry scan's query: the conversation and its inclusive id bounds. */
export interface EntryScanFilter {
  conversationId: number;
  min: number;
  max: number;
}

export function entryScan(
  query: unknown,
  limit: unknown,
  cursor: Cursor | undefined,
): CheckedScan<EntryScanFilter> {
  const scan = "scanEntries";
  const max = checkLimit(limit);
  const order = checkQuery(
    scan,
    query,
    ["conversationId", "minEntryId", "maxEntryId"],
    "descending",
  );
  const q = query as object;
  const filter = {
    conversationId: idField(scan, q, "conversationId", true) as number,
    min: idField(scan, q, "minEntryId", false) ?? 1,
    max: idField(scan, q, "maxEntryId", false) ?? Number.MAX_SAFE_INTEGER,
  };
  return checked(scan, q, max, cursor, order, filter);
}

export function taskScan(
  query: unknown,
  limit: unknown,
  cursor: Cursor | undefined,
): CheckedScan<TaskFilter> {
  const scan = "scanTasks";
  const max = checkLimit(limit);
  const order = checkQuery(
    scan,
    query,
    ["conversationId", "kind", "status", "abortRequested", "background", "owner"],
    "ascending",
  );
  const q = query as object;
  const filter: TaskFilter = {};
  const conversationId = idField(scan, q, "conversationId", false);
  if (conversationId !== undefined) filter.conversationId = conversationId;
  const owner = idField(scan, q, "owner", false);
  if (owner !== undefined) filter.owner = owner;
  const kind = oneOfField<string>(scan, q, "kind", "string");
  if (kind !== undefined) filter.kind = kind;
  const status = oneOfField(scan, q, "status", TASK_STATUSES);
  if (status !== undefined) filter.status = status;
  const abortRequested = oneOfField(scan, q, "abortRequested", BOOLEANS);
  if (abortRequested !== undefined) filter.abortRequested = abortRequested;
  const background = oneOfField(scan, q, "background", BOOLEANS);
  if (background !== undefined) filter.background = background;
  return checked(scan, q, max, cursor, order, filter);
}

export function submissionScan(
  query: unknown,
  limit: unknown,
  cursor: Cursor | undefined,
): CheckedScan<SubmissionFilter> {
  const scan = "scanSubmissions";
  const max = checkLimit(limit);
  const order = checkQuery(scan, query, ["conversationId", "status"], "ascending");
  const q = query as object;
  const filter: SubmissionFilter = {
    conversationId: idField(scan, q, "conversationId", true) as number,
  };
  const status = oneOfField(scan, q, "status", SUBMISSION_STATUSES);
  if (status !== undefined) filter.status = status;
  return checked(scan, q, max, cursor, order, filter);
}

export function documentScan(
  query: unknown,
  limit: unknown,
  cursor: Cursor | undefined,
): CheckedScan<DocumentFilter> {
  const scan = "scanDocuments";
  const max = checkLimit(limit);
  const order = checkQuery(scan, query, ["scope", "at", "kind"], "ascending");
  const q = query as { scope?: unknown; at?: unknown };
  let filter: DocumentFilter;
  try {
    filter = { scope: checkScope(q.scope), at: checkAt(q.at) };
  } catch (error) {
    if (error instanceof StorageRequestError)
      throw new StorageRequestError("bad-query", `${scan}: ${error.message}`);
    throw error;
  }
  const kind = oneOfField<string>(scan, q, "kind", "string");
  if (kind !== undefined) filter.kind = kind;
  return checked(scan, q, max, cursor, order, filter);
}
