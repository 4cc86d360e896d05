import type { Json, JsonObject } from "./json.js";
import { formatPath, type PathSegment } from "./json-path.js";
import { MAX_NUMBER_BYTES, stringBound } from "./json-size.js";

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

/** The state of one walk. Reused across calls (`acquire`, `release`): a copy allocates only its output. */
class CopyContext {
  root = "";
  /** `path[d]`: the key under which the container at nesting `d + 1` was reached. Only grows. */
  readonly path: PathSegment[] = [];
  /** The containers being walked, outermost first, for cycle detection. Only grows; slots are cleared. */
  readonly ancestors: (object | undefined)[] = [];
  /** How many containers are being walked (the current nesting). */
  depth = 0;
  build = true;
  freeze = false;
  /** Levels allowed below the copied value's root, and the limit the error message states. */
  levels = 0;
  stated = 0;
  /** The deepest nesting met, counted from the copied value's root. */
  deepest = 0;
  /** An upper bound of the copied value's JSON text, summed during the walk (see `copiedBound`). */
  bound = 0;
}

/** The bound of the last value copied or checked. */
let lastBound = 0;

/**
 * @internal An upper bound of the JSON text of the value the last
 * `copyJson` / `checkJson` / `copyJsonMeasured` call returned: summed in the
 * same walk (a few additions per node), so a size limit costs no second
 * walk. Read it right after the call.
 */
export function copiedBound(): number {
  return lastBound;
}

/** An upper bound of a primitive's JSON text. */
function primitiveBound(value: Json): number {
  return typeof value === "string" ? stringBound(value) : MAX_NUMBER_BYTES;
}

/** A context free for the next walk; a walk that starts inside another (a proxy trap, say) makes its own. */
let spare: CopyContext | undefined;

function acquire(root: string, build: boolean, options: JsonCopyOptions | undefined): CopyContext {
  const ctx = spare ?? new CopyContext();
  spare = undefined;
  const depth = options?.depth;
  ctx.root = root;
  ctx.build = build;
  ctx.freeze = build && options?.freeze === true;
  ctx.levels = depth === undefined ? MAX_JSON_DEPTH + STORAGE_WRITE_LEVELS : MAX_JSON_DEPTH - depth;
  ctx.stated = depth === undefined ? MAX_JSON_DEPTH + STORAGE_WRITE_LEVELS : MAX_JSON_DEPTH;
  ctx.deepest = 0;
  ctx.bound = 0;
  return ctx;
}

function release(ctx: CopyContext): void {
  lastBound = ctx.bound;
  ctx.depth = 0;
  spare = ctx;
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
export function setOwn<T>(target: { [key: string]: T }, key: string, item: T): void {
  if (key === "__proto__")
    Object.defineProperty(target, key, {
      value: item,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  else target[key] = item;
}

function fail(ctx: CopyContext, path: readonly PathSegment[], what: string): never {
  throw new TypeError(`${formatPath(ctx.root, path)}: ${what} is not JSON`);
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
    if (primitive === undefined) primitiveFailure(value, root);
    lastBound = primitiveBound(primitive);
    return primitive;
  }
  const ctx = acquire(root, true, options);
  try {
    return copyAt(value, ctx);
  } finally {
    release(ctx);
  }
}

/** Same checks as `copyJson` without building a copy. */
export function checkJson(
  value: unknown,
  root = "value",
  options?: JsonCopyOptions,
): asserts value is Json {
  if (typeof value !== "object" || value === null) {
    const primitive = jsonPrimitive(value);
    if (primitive === undefined) primitiveFailure(value, root);
    lastBound = primitiveBound(primitive);
    return;
  }
  const ctx = acquire(root, false, options);
  try {
    copyAt(value, ctx);
  } finally {
    release(ctx);
  }
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
): { value: Json; deepest: number; bound: number } {
  const ctx = acquire(root, true, options);
  try {
    const copied = copyAt(value, ctx);
    return { value: copied, deepest: ctx.deepest, bound: ctx.bound };
  } finally {
    release(ctx);
  }
}

function copyAt(value: unknown, ctx: CopyContext): Json {
  if (typeof value !== "object" || value === null) {
    const primitive = jsonPrimitive(value);
    if (primitive === undefined) fail(ctx, ctx.path.slice(0, ctx.depth), describe(value));
    ctx.bound += primitiveBound(primitive);
    return primitive;
  }
  const { ancestors } = ctx;
  const nesting = ctx.depth;
  for (let i = 0; i < nesting; i++)
    if (ancestors[i] === value) fail(ctx, ctx.path.slice(0, nesting), "a cycle");
  // Checked before descending, so a value nested thousands deep stops here, not in a stack overflow.
  const level = nesting + 1;
  if (level > ctx.levels)
    throw new NestingTooDeep(
      `${formatPath(ctx.root, ctx.path.slice(0, nesting))}: nesting deeper than ${ctx.stated} levels`,
    );
  if (level > ctx.deepest) ctx.deepest = level;
  ctx.bound += 2; // the brackets
  ancestors[nesting] = value;
  ctx.depth = level;
  try {
    const out: Json = Array.isArray(value) ? copyArray(value, ctx) : copyObject(value, ctx);
    if (ctx.freeze) Object.freeze(out);
    return out;
  } finally {
    ancestors[nesting] = undefined; // keeps no caller object alive after the walk
    ctx.depth = nesting;
  }
}

/** The path of the container being walked (one key per container above it), or of its child `key`. */
function pathTo(ctx: CopyContext, key?: PathSegment): PathSegment[] {
  const path = ctx.path.slice(0, ctx.depth - 1);
  if (key !== undefined) path.push(key);
  return path;
}

/** A child value: primitives checked in place, containers walked one level down. */
function copyChild(item: unknown, key: PathSegment, ctx: CopyContext): Json {
  if (typeof item !== "object" || item === null) {
    const primitive = jsonPrimitive(item);
    if (primitive === undefined) fail(ctx, pathTo(ctx, key), describe(item));
    ctx.bound += typeof primitive === "string" ? primitive.length * 6 + 2 : MAX_NUMBER_BYTES;
    return primitive;
  }
  // The container at depth d is reached through path[d - 1].
  ctx.path[ctx.depth - 1] = key;
  return copyAt(item, ctx);
}

function copyArray(value: unknown[], ctx: CopyContext): Json[] {
  const { build } = ctx;
  if (Object.getPrototypeOf(value) !== Array.prototype) fail(ctx, pathTo(ctx), describe(value));
  const length = value.length;
  const out: Json[] = build ? new Array<Json>(length) : [];
  for (let i = 0; i < length; i++) {
    // One descriptor read per element: it finds holes and accessors and carries the value.
    const descriptor = Object.getOwnPropertyDescriptor(value, i);
    if (descriptor === undefined) fail(ctx, pathTo(ctx, i), "a hole in a sparse array");
    if (descriptor.get || descriptor.set) fail(ctx, pathTo(ctx, i), "an accessor");
    const copied = copyChild(descriptor.value, i, ctx);
    ctx.bound += 1; // the comma
    if (build) out[i] = copied;
  }
  return out;
}

function copyObject(value: object, ctx: CopyContext): JsonObject {
  const { build } = ctx;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) fail(ctx, pathTo(ctx), describe(value));
  if (Object.getOwnPropertySymbols(value).length > 0)
    fail(ctx, pathTo(ctx), "an object with symbol keys");
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    // Gone meanwhile (a proxy, say): skipped, as JSON.stringify would.
    if (descriptor === undefined) continue;
    if (descriptor.get || descriptor.set) fail(ctx, pathTo(ctx, key), "an accessor");
    const item: unknown = descriptor.value;
    if (item === undefined) continue;
    ctx.bound += key.length * 6 + 4; // the key, its quotes, the colon, the comma
    const copied = copyChild(item, key, ctx);
    if (build) setOwn(out, key, copied);
  }
  return out;
}
