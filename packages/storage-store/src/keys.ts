import { type DocumentScope } from "@durably/core";
import { scopeKey } from "@durably/core/storage";

/**
 * The key layout (README "Key layout"). Every key is ASCII: ids and seqs are
 * 16-digit zero-padded decimals (every safe integer fits), so string order is
 * numeric order; user strings (kinds, document keys, request ids) are escaped
 * to `[A-Za-z0-9._]` plus `%XXXX` per other UTF-16 unit, so they never
 * contain the `/` separator and a prefix range never leaks into a longer one.
 */

const WIDTH = 16;

export function pad(n: number): string {
  return String(n).padStart(WIDTH, "0");
}

const SAFE = /^[A-Za-z0-9._]*$/;

/** Injective escaping of a user string into a key segment. */
export function text(value: string): string {
  if (SAFE.test(value)) return value;
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const ch = value[i] as string;
    if (/[A-Za-z0-9._]/.test(ch)) out += ch;
    else out += "%" + value.charCodeAt(i).toString(16).toUpperCase().padStart(4, "0");
  }
  return out;
}

/** The exclusive upper bound of every key starting with `prefix`. */
export function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** Parses the trailing fixed-width number of a key; `undefined` if it is not one. */
export function trailingNumber(key: string): number | undefined {
  const tail = key.slice(key.lastIndexOf("/") + 1);
  if (tail.length !== WIDTH || !/^\d+$/.test(tail)) return undefined;
  const n = Number(tail);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

export const K = {
  format: "m/format",
  counters: "m/counters",
  markers: "l/",
  marker: (firstSeq: number) => `l/${pad(firstSeq)}`,

  conversation: (id: number) => `c/${pad(id)}`,
  conversations: "c/",
  conversationsByOwner: (taskId: number) => `co/${pad(taskId)}/`,

  entries: (conversationId: number) => `e/${pad(conversationId)}/`,
  entry: (conversationId: number, id: number) => `e/${pad(conversationId)}/${pad(id)}`,
  entryHome: (id: number) => `ei/${pad(id)}`,
  heads: (conversationId: number) => `eh/${pad(conversationId)}/`,

  task: (id: number) => `t/${pad(id)}`,
  tasks: "t/",
  tasksByConversation: (conversationId: number) => `tc/${pad(conversationId)}/`,
  tasksByStatus: (status: string) => `ts/${text(status)}/`,
  tasksByKind: (kind: string) => `tk/${text(kind)}/`,
  tasksByOwner: (owner: number) => `to/${pad(owner)}/`,

  submission: (id: number) => `s/${pad(id)}`,
  submissionsByConversation: (conversationId: number) => `sc/${pad(conversationId)}/`,
  submissionsByRequest: (conversationId: number, requestId: string) =>
    `sr/${pad(conversationId)}/${text(requestId)}/`,

  document: (id: number) => `d/${pad(id)}`,
  documentsAt: (kind: string, scope: DocumentScope, key: string | undefined) =>
    `da/${text(kind)}/${scopeKey(scope)}/${key === undefined ? "-" : text(key)}/`,
  documentsIn: (scope: DocumentScope) => `ds/${scopeKey(scope)}/`,
  revisions: (documentId: number) => `r/${pad(documentId)}/`,
  revision: (documentId: number, seq: number) => `r/${pad(documentId)}/${pad(seq)}`,
} as const;

/** What each key range holds, for the README and `keyRanges()`. */
export const KEY_RANGES: readonly { prefix: string; holds: string }[] = [
  {
    prefix: "m/",
    holds:
      "metadata: m/format (layout version), m/counters (last seq, id high-water mark, verified seq, newest marker link)",
  },
  {
    prefix: "l/",
    holds: "l/<first seq> -> { to, prev } commit marker, one per commit call (commit chain)",
  },
  { prefix: "c/", holds: "c/<conversation> -> ConversationRecord" },
  {
    prefix: "co/",
    holds: "co/<owner task>/<conversation> -> '' (scanConversations by ownerTaskId)",
  },
  { prefix: "e/", holds: "e/<conversation>/<entry> -> { seq, entry } (scanEntries)" },
  { prefix: "eh/", holds: "eh/<conversation>/<entry> -> '' for entries with a head (latestHead)" },
  { prefix: "ei/", holds: "ei/<entry> -> <conversation> (entry(id))" },
  { prefix: "t/", holds: "t/<task> -> TaskRecord" },
  {
    prefix: "tc/",
    holds: "tc/<conversation>/<task> -> task summary (scanTasks by conversationId)",
  },
  { prefix: "tk/", holds: "tk/<kind>/<task> -> task summary (scanTasks by kind)" },
  { prefix: "to/", holds: "to/<owner task>/<task> -> task summary (scanTasks by owner)" },
  { prefix: "ts/", holds: "ts/<status>/<task> -> task summary (scanTasks by status)" },
  { prefix: "s/", holds: "s/<submission> -> SubmissionRecord" },
  { prefix: "sc/", holds: "sc/<conversation>/<submission> -> { s: status } (scanSubmissions)" },
  {
    prefix: "sr/",
    holds: "sr/<conversation>/<request id>/<submission> -> '' (submissionByRequest)",
  },
  {
    prefix: "d/",
    holds: "d/<document> -> { record, version, base } (incarnation + newest base seq)",
  },
  {
    prefix: "da/",
    holds: "da/<kind>/<scope>/<key or ->/<document> -> DocumentRecord (findDocument)",
  },
  { prefix: "ds/", holds: "ds/<scope>/<document> -> DocumentRecord (scanDocuments)" },
  {
    prefix: "r/",
    holds: "r/<document>/<seq> -> base { kind, version, value } or delta { kind, version, ops }",
  },
];
