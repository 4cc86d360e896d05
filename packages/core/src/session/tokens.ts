import type { ConversationId, TaskId } from "../domain/ids.js";
import type { Json } from "../domain/json.js";
import type { Op } from "../domain/ops.js";
import { checkTextBytes, MAX_KIND_BYTES } from "../domain/json-size.js";
import type { DocumentHistory, DocumentScope, ForkPolicy } from "../domain/records.js";
import type { DocumentAddress } from "../storage/port.js";
import { scopeKey } from "../storage/scope.js";

/** Where a document lives: one per session, per conversation or per task. */
export type DocScopeKind = "session" | "conversation" | "task";

/** The id that picks the scope instance: none for session documents. */
export type ScopeIdOf<S extends DocScopeKind> = S extends "session"
  ? null | undefined
  : S extends "conversation"
    ? ConversationId
    : TaskId;

/** Documents are JSON objects or arrays (a draft needs a container to track). */
export type DocValue = { [key: string]: Json } | Json[];

export interface CheckpointInfo {
  /** Deltas this session believes follow the newest base (a hint; coalescing may store fewer). */
  deltasSinceBase: number;
}

interface DocOptionsCommon<T extends DocValue, S extends DocScopeKind> {
  /** Stable identifier of the document type, e.g. "app.notes". */
  kind: string;
  /** Positive integer; raise it with a `migrate` when the shape changes. */
  version: number;
  scope: S;
  /** Conversation scope only. "rewindable" keeps every revision (needed by `snapshotAsOf` and `fork: "asOf"`). */
  history?: DocumentHistory;
  /** Conversation scope only: what a forked child conversation starts with. Default "initial". */
  fork?: ForkPolicy;
  /** Turns a value stored at an older version into this version's shape (lazy, on read). */
  migrate?: (value: Json, fromVersion: number) => T;
  /** Return true to store the whole value (a base) instead of this commit's ops. */
  checkpointWhen?: (value: T, ops: readonly Op[], info: CheckpointInfo) => boolean;
}

export interface DocOptions<T extends DocValue, S extends DocScopeKind> extends DocOptionsCommon<
  T,
  S
> {
  initial: () => T;
}

export interface DocFamilyOptions<
  T extends DocValue,
  S extends DocScopeKind,
  Seed,
> extends DocOptionsCommon<T, S> {
  initial: (seed: Seed) => T;
}

/** A single document per scope instance, from `defineDoc`. */
export interface DocToken<
  T extends DocValue = DocValue,
  S extends DocScopeKind = DocScopeKind,
> extends Readonly<DocOptions<T, S>> {
  readonly family: false;
}

/** Many documents per scope instance, addressed by a string key, from `defineDocFamily`. */
export interface DocFamilyToken<
  T extends DocValue = DocValue,
  S extends DocScopeKind = DocScopeKind,
  Seed = undefined,
> extends Readonly<DocFamilyOptions<T, S, Seed>> {
  readonly family: true;
}

export type AnyDocToken =
  DocToken<DocValue, DocScopeKind> | DocFamilyToken<DocValue, DocScopeKind, unknown>;

function checkCommon(options: DocOptionsCommon<DocValue, DocScopeKind>, what: string): void {
  if (typeof options.kind !== "string" || options.kind === "")
    throw new TypeError(`${what}: kind must be a non-empty string`);
  checkTextBytes(options.kind, MAX_KIND_BYTES, `${what} kind`);
  const where = `${what} "${options.kind}"`;
  if (!Number.isSafeInteger(options.version) || options.version < 1)
    throw new TypeError(
      `${where}: version must be a positive integer, got ${String(options.version)}`,
    );
  if (options.scope !== "session" && options.scope !== "conversation" && options.scope !== "task")
    throw new TypeError(`${where}: scope must be "session", "conversation" or "task"`);
  if (
    options.history !== undefined &&
    options.history !== "latest" &&
    options.history !== "rewindable"
  )
    throw new TypeError(`${where}: history must be "latest" or "rewindable"`);
  if (
    options.fork !== undefined &&
    options.fork !== "asOf" &&
    options.fork !== "current" &&
    options.fork !== "initial"
  )
    throw new TypeError(`${where}: fork must be "asOf", "current" or "initial"`);
  if (
    options.scope !== "conversation" &&
    (options.history !== undefined || options.fork !== undefined)
  )
    throw new TypeError(`${where}: history and fork apply to conversation documents only`);
  if (options.fork === "asOf" && options.history !== "rewindable")
    throw new TypeError(
      `${where}: fork "asOf" needs history "rewindable" (the value at the fork point must be kept)`,
    );
  if (options.version > 1 && options.migrate === undefined)
    throw new TypeError(
      `${where}: version ${options.version} needs a migrate function for older stored versions`,
    );
}

/** Defines a document type: one document per scope instance. */
export function defineDoc<T extends DocValue, S extends DocScopeKind = DocScopeKind>(
  options: DocOptions<T, S>,
): DocToken<T, S> {
  checkCommon(options as DocOptionsCommon<DocValue, DocScopeKind>, "defineDoc");
  if (typeof options.initial !== "function")
    throw new TypeError(`defineDoc "${options.kind}": initial must be a function`);
  return Object.freeze({ ...options, family: false as const });
}

/** Defines a family of documents addressed by (scope, key), created from `initial(seed)`. */
export function defineDocFamily<
  T extends DocValue,
  S extends DocScopeKind = DocScopeKind,
  Seed = undefined,
>(options: DocFamilyOptions<T, S, Seed>): DocFamilyToken<T, S, Seed> {
  checkCommon(options as DocOptionsCommon<DocValue, DocScopeKind>, "defineDocFamily");
  if (typeof options.initial !== "function")
    throw new TypeError(`defineDocFamily "${options.kind}": initial must be a function`);
  return Object.freeze({ ...options, family: true as const });
}

/** What `tx.createTask` needs of a task definition; `defineTask` (tasks issue) returns a superset. */
export interface TaskToken<Input extends Json = Json, Checkpoint extends Json = Json> {
  readonly name: string;
  readonly version: number;
  initial(input: Input): Checkpoint;
}

/** Checks the arguments that pick a document: a token, a scope id of its scope, a key for a family. */
function checkDocArguments(token: AnyDocToken, scopeId: unknown, key: unknown): void {
  if (typeof token !== "object" || token === null || typeof token.kind !== "string")
    throw new TypeError("not a document token: use defineDoc or defineDocFamily");
  switch (token.scope) {
    case "session":
      if (scopeId !== undefined && scopeId !== null)
        throw new TypeError(
          `document "${token.kind}" is session scoped: pass null as its scope id`,
        );
      break;
    case "conversation":
      if (!Number.isSafeInteger(scopeId) || (scopeId as number) < 1)
        throw new TypeError(
          `document "${token.kind}": conversation id must be a positive integer, got ${String(scopeId)}`,
        );
      break;
    case "task":
      if (!Number.isSafeInteger(scopeId) || (scopeId as number) < 1)
        throw new TypeError(
          `document "${token.kind}": task id must be a positive integer, got ${String(scopeId)}`,
        );
      break;
  }
  if (token.family) {
    if (typeof key !== "string")
      throw new TypeError(`document family "${token.kind}": key must be a string`);
  } else if (key !== undefined)
    throw new TypeError(`document "${token.kind}" is not a family: it takes no key`);
}

/** Resolves a token plus scope id (and key) to a storage address, checking the arguments. */
export function addressOf(token: AnyDocToken, scopeId: unknown, key: unknown): DocumentAddress {
  checkDocArguments(token, scopeId, key);
  let scope: DocumentScope;
  switch (token.scope) {
    case "session":
      scope = { kind: "session" };
      break;
    case "conversation":
      scope = { kind: "conversation", conversationId: scopeId as ConversationId };
      break;
    case "task":
      scope = { kind: "task", taskId: scopeId as TaskId };
      break;
  }
  return token.family
    ? { kind: token.kind, scope, key: key as string }
    : { kind: token.kind, scope };
}

/**
 * `addressKey(addressOf(token, scopeId, key))` without building the address:
 * what every `tx.doc` looks up first.
 */
export function addressKeyOf(token: AnyDocToken, scopeId: unknown, key: unknown): string {
  checkDocArguments(token, scopeId, key);
  if (key !== undefined) return buildKey(token, scopeId, key as string);
  // Single documents: the key of each scope is kept, so the next lookup neither builds nor
  // hashes a new string (a cached string carries its hash).
  let byScope = keyCache.get(token);
  if (byScope === undefined) keyCache.set(token, (byScope = new Map<unknown, string>()));
  const scope = scopeId ?? null;
  let cached = byScope.get(scope);
  if (cached === undefined) {
    if (byScope.size >= KEY_CACHE_SIZE) byScope.clear();
    cached = buildKey(token, scopeId, undefined);
    byScope.set(scope, cached);
  }
  return cached;
}

/** Address keys of single documents by token, then scope id (bounded per token). */
const keyCache = new WeakMap<AnyDocToken, Map<unknown, string>>();
const KEY_CACHE_SIZE = 4096;

function buildKey(token: AnyDocToken, scopeId: unknown, key: string | undefined): string {
  const { kind } = token;
  const scope =
    token.scope === "session"
      ? "s"
      : token.scope === "conversation"
        ? `c:${scopeId as number}`
        : `t:${scopeId as number}`;
  return key === undefined
    ? `${kind.length}:${kind}${scope}`
    : `${kind.length}:${kind}${scope}\u0000${key}`;
}

/**
 * A map key for an address. Injective without escaping (this runs on every
 * `tx.doc`, JSON.stringify cost more than the rest of the lookup): the kind
 * is length-prefixed, the scope key (`s`, `c:<id>`, `t:<id>`) holds no NUL,
 * and a family key follows a NUL.
 */
export function addressKey(address: DocumentAddress): string {
  const scope = scopeKey(address.scope);
  const { kind, key } = address;
  return key === undefined
    ? `${kind.length}:${kind}${scope}`
    : `${kind.length}:${kind}${scope}\u0000${key}`;
}
