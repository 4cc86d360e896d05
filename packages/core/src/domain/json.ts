/** Strict JSON: what every stored value must be. */
export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export type PathSegment = string | number;
export type JsonPath = readonly PathSegment[];

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Renders `["items", 3, "a b"]` under `root` as `root.items[3]["a b"]`. */
export function formatPath(root: string, path: JsonPath): string {
  let out = root;
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "number") return String(value);
  if (typeof value === "bigint") return "a bigint";
  if (typeof value === "function") return "a function";
  if (typeof value === "symbol") return "a symbol";
  if (typeof value === "object" && value !== null) {
    const ctor = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)
      ?.constructor?.name;
    return ctor ? `an instance of ${ctor}` : "a non-plain object";
  }
  return typeof value;
}

/**
 * Sets an own data property. Plain assignment would treat a `__proto__` key
 * (legal in JSON text) as the prototype setter and silently drop the value.
 */
function setOwn(target: JsonObject, key: string, item: Json): void {
  if (key === "__proto__")
    Object.defineProperty(target, key, {
      value: item,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  else target[key] = item;
}

function fail(root: string, path: PathSegment[], what: string): never {
  throw new TypeError(`${formatPath(root, path)}: ${what} is not JSON`);
}

/**
 * Validates and deep-copies in one pass (the hot path copies once, not
 * validate-then-clone). Object properties whose value is `undefined` are
 * omitted, as `JSON.stringify` does; everything else that JSON cannot carry
 * (undefined in arrays, NaN, Infinity, bigint, functions, symbols, cycles,
 * sparse arrays, class instances, accessors, symbol keys) throws a
 * `TypeError` naming the path under `root`.
 */
export function copyJson(value: unknown, root = "value"): Json {
  return copyAt(value, root, [], []);
}

/** Same checks as `copyJson` without building a copy. */
export function checkJson(value: unknown, root = "value"): asserts value is Json {
  copyAt(value, root, [], [], false);
}

function copyAt(
  value: unknown,
  root: string,
  path: PathSegment[],
  ancestors: object[],
  build = true,
): Json {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) fail(root, path, describe(value));
      return value;
    case "object":
      break;
    default:
      fail(root, path, describe(value));
  }
  if (value === null) return null;
  if (ancestors.includes(value)) fail(root, path, "a cycle");
  ancestors.push(value);
  try {
    if (Array.isArray(value)) {
      if (Object.getPrototypeOf(value) !== Array.prototype) fail(root, path, describe(value));
      const length = value.length;
      const out: Json[] = build ? new Array<Json>(length) : [];
      for (let i = 0; i < length; i++) {
        const descriptor = Object.getOwnPropertyDescriptor(value, i);
        if (descriptor === undefined) fail(root, [...path, i], "a hole in a sparse array");
        if (descriptor.get || descriptor.set) fail(root, [...path, i], "an accessor");
        path.push(i);
        const item = copyAt(value[i], root, path, ancestors, build);
        path.pop();
        if (build) out[i] = item;
      }
      return out;
    }
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) fail(root, path, describe(value));
    if (Object.getOwnPropertySymbols(value).length > 0)
      fail(root, path, "an object with symbol keys");
    const out: JsonObject = {};
    const source = value as Record<string, unknown>;
    for (const key of Object.keys(source)) {
      const descriptor = Object.getOwnPropertyDescriptor(source, key);
      if (descriptor && (descriptor.get || descriptor.set))
        fail(root, [...path, key], "an accessor");
      const item = source[key];
      if (item === undefined) continue;
      path.push(key);
      const copied = copyAt(item, root, path, ancestors, build);
      path.pop();
      if (build) setOwn(out, key, copied);
    }
    return out;
  } finally {
    ancestors.pop();
  }
}

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
