import type { Json, JsonObject } from "./json.js";
import { formatPath, type PathSegment } from "./json-path.js";

/** The deepest nesting of arrays and objects a value written into a transaction may have. */
export const MAX_JSON_DEPTH = 256;

/**
 * How much deeper than `MAX_JSON_DEPTH` a copy without a `depth` may nest:
 * room for what a storage write puts around a value (the write, its record,
 * the field; a task's memo value sits four levels down), so adapters copying
 * whole writes accept every value the transaction accepted. It also bounds
 * the recursion far below a stack overflow.
 */
export const STORAGE_WRITE_LEVELS = 8;

export interface JsonCopyOptions {
  /**
   * Arrays and objects around the value that count toward `MAX_JSON_DEPTH`:
   * the length of the document path a value is assigned at (a document
   * counts as a whole), or a negative number for wrappers that are not part
   * of any value (an entry's input object is -1, so each field gets 256).
   * Without it, only the looser bound of a whole storage write applies
   * (`MAX_JSON_DEPTH + STORAGE_WRITE_LEVELS` from the copied value).
   */
  depth?: number;
  /**
   * Freeze every array and object of the copy as it is built (the session
   * shares what it copies with readers, so it would freeze it next anyway:
   * one walk instead of two).
   */
  freeze?: boolean;
}

/** @internal The depth failure, told apart from other violations by callers that re-check per value. */
export class NestingTooDeep extends TypeError {}

interface CopyContext {
  readonly root: string;
  readonly path: PathSegment[];
  /** The containers above the current one, for cycle detection; its length is the current nesting. */
  readonly ancestors: object[];
  readonly build: boolean;
  readonly freeze: boolean;
  /** Levels allowed below the copied value's root, and the limit the error message states. */
  readonly levels: number;
  readonly stated: number;
  /** The deepest nesting met, counted from the copied value's root. */
  deepest: number;
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
export function setOwn(target: JsonObject, key: string, item: Json): void {
  if (key === "__proto__")
    Object.defineProperty(target, key, {
      value: item,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  else target[key] = item;
}

function fail(ctx: CopyContext, path: PathSegment[], what: string): never {
  throw new TypeError(`${formatPath(ctx.root, path)}: ${what} is not JSON`);
}

function context(root: string, build: boolean, options: JsonCopyOptions | undefined): CopyContext {
  const depth = options?.depth;
  return {
    root,
    path: [],
    ancestors: [],
    build,
    freeze: build && options?.freeze === true,
    levels: depth === undefined ? MAX_JSON_DEPTH + STORAGE_WRITE_LEVELS : MAX_JSON_DEPTH - depth,
    stated: depth === undefined ? MAX_JSON_DEPTH + STORAGE_WRITE_LEVELS : MAX_JSON_DEPTH,
    deepest: 0,
  };
}

/**
 * A primitive as JSON carries it (`-0` as `0`), or `undefined` when it is not
 * JSON. Most values written are primitives: they need no copy context at all.
 */
export function jsonPrimitive(value: unknown): Json | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) return undefined;
      return value === 0 ? 0 : value; // -0 === 0: both become +0
    case "object":
      return value === null ? null : undefined;
    default:
      return undefined;
  }
}

function primitiveFailure(value: unknown, root: string): never {
  throw new TypeError(`${formatPath(root, [])}: ${describe(value)} is not JSON`);
}

/**
 * Validates and deep-copies in one pass (the hot path copies once, not
 * validate-then-clone). Object properties whose value is `undefined` are
 * omitted, as `JSON.stringify` does; `-0` becomes `0` (some backends cannot
 * keep the sign, so none does); everything else that JSON cannot carry
 * (undefined in arrays, NaN, Infinity, bigint, functions, symbols, cycles,
 * sparse arrays, class instances, accessors, symbol keys) and nesting beyond
 * the depth limit (see `JsonCopyOptions.depth`) throws a `TypeError` naming
 * the path under `root`.
 */
export function copyJson(value: unknown, root = "value", options?: JsonCopyOptions): Json {
  if (typeof value !== "object" || value === null) {
    const primitive = jsonPrimitive(value);
    return primitive === undefined ? primitiveFailure(value, root) : primitive;
  }
  return copyAt(value, context(root, true, options));
}

/** Same checks as `copyJson` without building a copy. */
export function checkJson(
  value: unknown,
  root = "value",
  options?: JsonCopyOptions,
): asserts value is Json {
  if (typeof value !== "object" || value === null) {
    if (jsonPrimitive(value) === undefined) primitiveFailure(value, root);
    return;
  }
  copyAt(value, context(root, false, options));
}

/**
 * @internal `copyJson` that also reports the deepest nesting it met (counted
 * from the copied value's root), so a caller whose record holds several
 * values can tell, without a second walk, whether any of them may be too deep.
 */
export function copyJsonMeasured(
  value: unknown,
  root: string,
  options: JsonCopyOptions,
): { value: Json; deepest: number } {
  const ctx = context(root, true, options);
  return { value: copyAt(value, ctx), deepest: ctx.deepest };
}

function copyAt(value: unknown, ctx: CopyContext): Json {
  if (typeof value !== "object" || value === null) {
    const primitive = jsonPrimitive(value);
    return primitive === undefined ? fail(ctx, ctx.path, describe(value)) : primitive;
  }
  const { path, ancestors } = ctx;
  if (ancestors.includes(value)) fail(ctx, path, "a cycle");
  // Checked before descending, so a value nested thousands deep stops here, not in a stack overflow.
  const level = ancestors.length + 1;
  if (level > ctx.levels)
    throw new NestingTooDeep(
      `${formatPath(ctx.root, path)}: nesting deeper than ${ctx.stated} levels`,
    );
  if (level > ctx.deepest) ctx.deepest = level;
  ancestors.push(value);
  try {
    const out: Json = Array.isArray(value) ? copyArray(value, ctx) : copyObject(value, ctx);
    if (ctx.freeze) Object.freeze(out);
    return out;
  } finally {
    ancestors.pop();
  }
}

function copyArray(value: unknown[], ctx: CopyContext): Json[] {
  const { path, build } = ctx;
  if (Object.getPrototypeOf(value) !== Array.prototype) fail(ctx, path, describe(value));
  const length = value.length;
  const out: Json[] = build ? new Array<Json>(length) : [];
  for (let i = 0; i < length; i++) {
    // One descriptor read per element: it finds holes and accessors and carries the value.
    const descriptor = Object.getOwnPropertyDescriptor(value, i);
    if (descriptor === undefined) fail(ctx, [...path, i], "a hole in a sparse array");
    if (descriptor.get || descriptor.set) fail(ctx, [...path, i], "an accessor");
    const item: unknown = descriptor.value;
    let copied: Json;
    if (typeof item !== "object" || item === null) {
      const primitive = jsonPrimitive(item);
      if (primitive === undefined) fail(ctx, [...path, i], describe(item));
      copied = primitive;
    } else {
      path.push(i);
      copied = copyAt(item, ctx);
      path.pop();
    }
    if (build) out[i] = copied;
  }
  return out;
}

function copyObject(value: object, ctx: CopyContext): JsonObject {
  const { path, build } = ctx;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) fail(ctx, path, describe(value));
  if (Object.getOwnPropertySymbols(value).length > 0) fail(ctx, path, "an object with symbol keys");
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    // Gone meanwhile (a proxy, say): skipped, as JSON.stringify would.
    if (descriptor === undefined) continue;
    if (descriptor.get || descriptor.set) fail(ctx, [...path, key], "an accessor");
    const item: unknown = descriptor.value;
    if (item === undefined) continue;
    let copied: Json;
    if (typeof item !== "object" || item === null) {
      const primitive = jsonPrimitive(item);
      if (primitive === undefined) fail(ctx, [...path, key], describe(item));
      copied = primitive;
    } else {
      path.push(key);
      copied = copyAt(item, ctx);
      path.pop();
    }
    if (build) setOwn(out, key, copied);
  }
  return out;
}
