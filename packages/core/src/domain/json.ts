import { setOwn } from "./json-copy.js";

/** Strict JSON: what every stored value must be. */
export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export { formatPath, type JsonPath, type PathSegment } from "./json-path.js";
export {
  checkJson,
  copyJson,
  MAX_JSON_DEPTH,
  setOwn,
  STORAGE_WRITE_LEVELS,
  type JsonCopyOptions,
} from "./json-copy.js";
export {
  jsonBytes,
  MAX_COMMIT_BYTES,
  MAX_KEY_BYTES,
  MAX_KIND_BYTES,
  MAX_VALUE_BYTES,
} from "./json-size.js";

/** Deep copy of a value already known to be strict JSON (no checks). */
export function cloneJson<T extends Json>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => cloneJson(item)) as T;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) setOwn(out, key, cloneJson(item));
  return out as T;
}

/** Structural equality of two strict-JSON values. */
export function jsonEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i] as Json, b[i] as Json)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ak = Object.keys(a);
  const bk = Object.keys(b);
  if (ak.length !== bk.length) return false;
  for (const key of ak) {
    if (!Object.prototype.hasOwnProperty.call(b, key)) return false;
    if (!jsonEqual(a[key] as Json, b[key] as Json)) return false;
  }
  return true;
}

/** JSON text with object keys sorted, for fingerprints (cursor queries). */
export function canonicalJson(value: Json): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k] as Json)}`).join(",")}}`;
}
