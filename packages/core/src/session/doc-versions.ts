import { DocumentVersionError } from "../domain/errors.js";
import { cloneJson, copyJson } from "../domain/json.js";
import { deepFreeze } from "./freeze.js";
import type { DocState } from "./prepared.js";
import type { AnyDocToken, DocValue } from "./tokens.js";

const migrated = new WeakMap<object, Map<number, DocValue>>();

/** Rejects a stored version newer than the token (never guess at a newer shape). */
export function checkVersion(token: AnyDocToken, state: DocState): void {
  if (state !== null && state.version > token.version)
    throw new DocumentVersionError(
      `document ${state.id} ("${token.kind}") is stored at version ${state.version}, newer than this definition's version ${token.version}`,
    );
}

/** Applies the token's `migrate` to an older stored value; the result is strict JSON, frozen. */
export function migrateValue(token: AnyDocToken, value: DocValue, fromVersion: number): DocValue {
  if (!token.migrate)
    throw new DocumentVersionError(
      `document "${token.kind}" is stored at version ${fromVersion} but version ${token.version} has no migrate function`,
    );
  const next = copyJson(
    token.migrate(cloneJson(value), fromVersion),
    `${token.kind} (migrated from version ${fromVersion})`,
    { depth: 0 },
  );
  if (typeof next !== "object" || next === null)
    throw new TypeError(`${token.kind}: migrate must return a JSON object or array`);
  return deepFreeze(next);
}

/** The value of `state` as `token` reads it: as stored, or migrated in memory (memoised per state). */
export function readAs(token: AnyDocToken, state: DocState): DocValue | undefined {
  if (state === null) return undefined;
  checkVersion(token, state);
  if (state.version === token.version) return state.value;
  let memo = migrated.get(state);
  if (!memo) {
    memo = new Map<number, DocValue>();
    migrated.set(state, memo);
  }
  let value = memo.get(token.version);
  if (value === undefined) {
    value = migrateValue(token, state.value, state.version);
    memo.set(token.version, value);
  }
  return value;
}
