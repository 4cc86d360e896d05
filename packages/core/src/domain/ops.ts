import { InvalidOp } from "./errors.js";
import { formatPath, type Json, type JsonObject, type JsonPath, type PathSegment } from "./json.js";

/**
 * The document op vocabulary: JSON tuples over paths.
 * - `["r", value]` replace the whole value
 * - `["s", path, value]` set an object key or an existing array index
 * - `["d", path]` delete an object key
 * - `["a", path, text]` append text to a string
 * - `["t", path, n]` remove n UTF-16 units from the front of a string
 * - `["p", path, index, removeCount, items]` splice an array
 * - `["m", path, permutation]` reorder an array: `next[i] = previous[permutation[i]]`
 */
export type Op =
  | readonly ["r", Json]
  | readonly ["s", JsonPath, Json]
  | readonly ["d", JsonPath]
  | readonly ["a", JsonPath, string]
  | readonly ["t", JsonPath, number]
  | readonly ["p", JsonPath, number, number, readonly Json[]]
  | readonly ["m", JsonPath, readonly number[]];

export type OpKind = Op[0];

function bad(index: number, message: string): never {
  throw new InvalidOp(index, message);
}

function isPath(value: unknown): value is JsonPath {
  return (
    Array.isArray(value) &&
    value.every(
      (s) => typeof s === "string" || (typeof s === "number" && Number.isInteger(s) && s >= 0),
    )
  );
}

function isIndex(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0;
}

const ARITY: Readonly<Record<string, number>> = { r: 2, s: 3, d: 2, a: 3, t: 3, p: 5, m: 3 };

/** Throws `InvalidOp` unless `op` is a well-formed op tuple (shape only, not applicability). */
export function validateOp(op: unknown, index = 0): asserts op is Op {
  if (!Array.isArray(op) || typeof op[0] !== "string")
    bad(index, "an op must be a tuple starting with its kind");
  const kind = op[0];
  // An own-property lookup: "toString" or "__proto__" must not pass as kinds.
  const expected = Object.prototype.hasOwnProperty.call(ARITY, kind) ? ARITY[kind] : undefined;
  if (expected === undefined) bad(index, `unknown op kind ${JSON.stringify(kind)}`);
  if (op.length !== expected)
    bad(index, `op "${kind}" takes ${expected - 1} arguments, got ${op.length - 1}`);
  if (kind === "r") return;
  if (!isPath(op[1])) bad(index, `op "${kind}" has an invalid path`);
  switch (kind) {
    case "s":
    case "d":
      if (op[1].length === 0) bad(index, `op "${kind}" needs a non-empty path`);
      return;
    case "a":
      if (typeof op[2] !== "string") bad(index, `op "a" needs a string to append`);
      return;
    case "t":
      if (!isIndex(op[2])) bad(index, `op "t" needs a non-negative integer count`);
      return;
    case "p":
      if (!isIndex(op[2]) || !isIndex(op[3]) || !Array.isArray(op[4]))
        bad(index, `op "p" needs index, removeCount and an items array`);
      return;
    case "m":
      if (!Array.isArray(op[2]) || !op[2].every(isIndex))
        bad(index, `op "m" needs a permutation array`);
      return;
  }
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Returns a copy of `container` with `segment` set to `child`. */
function withChild(container: Json, segment: PathSegment, child: Json): Json {
  if (Array.isArray(container)) {
    const copy = container.slice();
    copy[segment as number] = child;
    return copy;
  }
  return { ...(container as JsonObject), [segment]: child };
}

function childOf(container: Json, segment: PathSegment, opIndex: number, where: string): Json {
  if (Array.isArray(container)) {
    if (typeof segment !== "number" || segment >= container.length)
      bad(opIndex, `${where}: no array element ${String(segment)}`);
    return container[segment] as Json;
  }
  if (isObject(container)) {
    if (typeof segment !== "string" || !Object.prototype.hasOwnProperty.call(container, segment))
      bad(opIndex, `${where}: no key ${JSON.stringify(segment)}`);
    return container[segment] as Json;
  }
  return bad(
    opIndex,
    `${where}: cannot descend into ${container === null ? "null" : typeof container}`,
  );
}

/** Rebuilds the spine from the root to `path`, replacing the target with `update(target)`. */
function updateAt(
  root: Json,
  path: JsonPath,
  opIndex: number,
  update: (target: Json, where: string) => Json,
): Json {
  const spine: Json[] = [root];
  let node = root;
  for (let i = 0; i < path.length; i++) {
    node = childOf(
      node,
      path[i] as PathSegment,
      opIndex,
      formatPath("value", path.slice(0, i + 1)),
    );
    spine.push(node);
  }
  let next = update(node, formatPath("value", path));
  for (let i = path.length - 1; i >= 0; i--)
    next = withChild(spine[i] as Json, path[i] as PathSegment, next);
  return next;
}

function applyOne(value: Json, op: Op, index: number): Json {
  switch (op[0]) {
    case "r":
      return op[1];
    case "s": {
      const parentPath = op[1].slice(0, -1);
      const key = op[1][op[1].length - 1] as PathSegment;
      return updateAt(value, parentPath, index, (parent, where) => {
        if (Array.isArray(parent)) {
          if (typeof key !== "number" || key >= parent.length)
            bad(index, `${where}: no array element ${String(key)} to set`);
        } else if (!isObject(parent) || typeof key !== "string") {
          bad(index, `${where}: cannot set ${JSON.stringify(key)} here`);
        }
        return withChild(parent, key, op[2]);
      });
    }
    case "d": {
      const parentPath = op[1].slice(0, -1);
      const key = op[1][op[1].length - 1] as PathSegment;
      return updateAt(value, parentPath, index, (parent, where) => {
        if (
          !isObject(parent) ||
          typeof key !== "string" ||
          !Object.prototype.hasOwnProperty.call(parent, key)
        )
          bad(index, `${where}: no key ${JSON.stringify(key)} to delete`);
        const copy = { ...parent };
        delete copy[key];
        return copy;
      });
    }
    case "a":
      return updateAt(value, op[1], index, (target, where) => {
        if (typeof target !== "string") bad(index, `${where}: append needs a string`);
        return target + op[2];
      });
    case "t":
      return updateAt(value, op[1], index, (target, where) => {
        if (typeof target !== "string") bad(index, `${where}: trim needs a string`);
        if (op[2] > target.length)
          bad(index, `${where}: cannot trim ${op[2]} units from a string of ${target.length}`);
        return target.slice(op[2]);
      });
    case "p":
      return updateAt(value, op[1], index, (target, where) => {
        if (!Array.isArray(target)) bad(index, `${where}: splice needs an array`);
        const [, , at, removeCount, items] = op;
        if (at > target.length)
          bad(index, `${where}: splice index ${at} is past the end (${target.length})`);
        if (at + removeCount > target.length)
          bad(index, `${where}: cannot remove ${removeCount} items at ${at} from ${target.length}`);
        // concat, not splice(...items): spreading a large item list overflows the call stack.
        return target.slice(0, at).concat(items, target.slice(at + removeCount));
      });
    case "m":
      return updateAt(value, op[1], index, (target, where) => {
        if (!Array.isArray(target)) bad(index, `${where}: reorder needs an array`);
        const permutation = op[2];
        if (permutation.length !== target.length)
          bad(
            index,
            `${where}: permutation of ${permutation.length} for an array of ${target.length}`,
          );
        const seen = new Array<boolean>(target.length).fill(false);
        for (const p of permutation) {
          if (p >= target.length || seen[p])
            bad(index, `${where}: ${JSON.stringify(permutation)} is not a permutation`);
          seen[p] = true;
        }
        return permutation.map((p) => target[p] as Json);
      });
  }
}

/**
 * Applies ops to a value without touching it (structural sharing: untouched
 * subtrees are shared with the input, so treat the result as immutable).
 * Any malformed or inapplicable op throws `InvalidOp` naming the op and path.
 */
export function applyOps(value: Json, ops: readonly Op[]): Json {
  let current = value;
  for (let i = 0; i < ops.length; i++) {
    const op: unknown = ops[i];
    validateOp(op, i);
    current = applyOne(current, op, i);
  }
  return current;
}
