import { DraftRevoked } from "../domain/errors.js";
import {
  copyJson,
  formatPath,
  jsonEqual,
  type Json,
  type JsonObject,
  type PathSegment,
} from "../domain/json.js";
import { copiedBound, jsonPrimitive, setOwn } from "../domain/json-copy.js";
import { checkedSize, jsonBound, MAX_NUMBER_BYTES, stringBound } from "../domain/json-size.js";
import type { Op } from "../domain/ops.js";
import { ARRAY_MUTATORS, arrayMethod } from "./draft-arrays.js";
import { DraftNode, type Container } from "./draft-node.js";
import { stringOps } from "./string-ops.js";
import type { DocValue } from "./tokens.js";
import { copiedSize, DEFAULT_LIMITS, type ValueLimits } from "./value-size.js";

/** An upper bound of an op's path and punctuation in JSON text. */
function pathBound(path: readonly PathSegment[]): number {
  let bytes = 16; // the op's brackets, kind, commas, the path's brackets
  for (let i = 0; i < path.length; i++) {
    const segment = path[i] as PathSegment;
    bytes += typeof segment === "number" ? MAX_NUMBER_BYTES : segment.length * 6 + 3;
  }
  return bytes;
}

/** A mutable view of a document inside a transaction: the document's own type. */
export type Draft<T> = T;

function arrayIndex(prop: string | symbol): number | undefined {
  if (typeof prop !== "string") return undefined;
  const n = Number(prop);
  return Number.isInteger(n) && n >= 0 && n < 4294967295 && String(n) === prop ? n : undefined;
}

function isContainer(value: unknown): value is Container {
  return typeof value === "object" && value !== null;
}

function samePath(a: readonly PathSegment[], b: readonly PathSegment[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function shallowCopy(value: Container): Container {
  return Array.isArray(value) ? value.slice() : { ...value };
}

const hasOwn = (target: object, key: PathSegment): boolean =>
  Object.prototype.hasOwnProperty.call(target, key);

/**
 * Tracks the changes made through a draft of one document as ops:
 * copy-on-access Proxy views, strict JSON checked and copied at the
 * assignment, string assignments diffed into append/trim ops, array methods
 * recorded as splices and permutations. `finish()` revokes every view and
 * returns the final frozen value with the ops that produce it from `base`.
 */
export class DraftTracker {
  readonly ops: Op[] = [];
  /**
   * An upper bound of the ops' JSON text (values counted as they are
   * copied, strings by their length): what the commit counts for this
   * document when it stores a delta.
   */
  bytes = 0;
  private root: DraftNode;
  private revoked = false;

  constructor(
    private readonly base: DocValue,
    /** Root of error paths, e.g. the document kind: `app.notes.items[3]: NaN is not JSON`. */
    private readonly label: string,
    private readonly limits: ValueLimits = DEFAULT_LIMITS,
  ) {
    this.root = new DraftNode(this, shallowCopy(base), undefined, "");
  }

  /** The root view handed to the transaction's callback. */
  get draft(): DocValue {
    this.checkLive();
    return this.root.proxy;
  }

  /** True once any change was recorded. */
  get changed(): boolean {
    return this.ops.length > 0;
  }

  /** Replaces the whole value (`["r", value]`); earlier views of this draft are revoked. */
  replace(value: unknown): DocValue {
    this.checkLive();
    const copied = copyJson(value, this.label, { depth: 0, freeze: true });
    if (!isContainer(copied))
      throw new TypeError(`${this.label}: a document must be a JSON object or array`);
    const bytes = copiedSize(copied, this.limits, this.label);
    this.bytes = bytes; // the earlier ops are dropped
    this.root.detach();
    this.ops.length = 0;
    this.ops.push(["r", copied]);
    this.root = new DraftNode(this, shallowCopy(copied), undefined, "");
    return this.root.proxy;
  }

  /** Revokes every view; returns the final value (frozen, sharing untouched parts with `base`) and the ops. */
  finish(): { value: DocValue; ops: Op[] } {
    this.revoked = true;
    if (this.ops.length === 0) return { value: this.base, ops: this.ops };
    return { value: this.root.freeze(), ops: this.ops };
  }

  /** Revokes every view without producing a value (the callback threw). */
  revoke(): void {
    this.revoked = true;
  }

  // ---- used by the nodes' proxy traps and the array methods ----------------

  /** @internal */
  checkLive(node?: DraftNode): void {
    if (this.revoked)
      throw new DraftRevoked(`${this.label}: the draft was used after its commit callback settled`);
    if (node?.detached)
      throw new DraftRevoked(
        `${this.label}: this part of the draft was removed or replaced; read it again from the draft`,
      );
  }

  /** @internal The path of `node` from the root; throws when it was detached. */
  pathOf(node: DraftNode): PathSegment[] {
    let depth = 0;
    for (let n: DraftNode | undefined = node; n?.parent; n = n.parent) {
      if (n.detached) this.checkLive(n);
      depth++;
    }
    return this.fillPath(node, new Array<PathSegment>(depth), depth);
  }

  /** The path of child `key` of `node`, built in one array. */
  private pathTo(node: DraftNode, key: PathSegment): PathSegment[] {
    let depth = 0;
    for (let n: DraftNode | undefined = node; n?.parent; n = n.parent) {
      if (n.detached) this.checkLive(n);
      depth++;
    }
    const path = new Array<PathSegment>(depth + 1);
    path[depth] = key;
    return this.fillPath(node, path, depth);
  }

  private fillPath(node: DraftNode, path: PathSegment[], depth: number): PathSegment[] {
    let i = depth;
    for (let n: DraftNode | undefined = node; n?.parent; n = n.parent) path[--i] = n.key;
    return path;
  }

  /** @internal Where `node` is, for error messages. */
  at(node: DraftNode): string {
    return this.where(this.pathOf(node));
  }

  /** @internal */
  where(path: readonly PathSegment[]): string {
    return formatPath(this.label, path);
  }

  /** @internal The view of child `key`: containers are copied on first access and proxied; primitives as they are. */
  view(node: DraftNode, key: PathSegment): unknown {
    const raw = (node.copy as Record<PathSegment, Json>)[key];
    if (!isContainer(raw)) return raw;
    const existing = node.children?.get(key);
    if (existing && existing.copy === raw) return existing.proxy;
    const copy = shallowCopy(raw);
    if (Array.isArray(node.copy)) node.copy[key as number] = copy;
    else setOwn(node.copy, key as string, copy);
    const child = new DraftNode(this, copy, node, key);
    (node.children ??= new Map()).set(key, child);
    return child.proxy;
  }

  /**
   * @internal A value placed at `path`, strict JSON, copied and frozen. The
   * document counts as a whole, so the containers above it count toward the
   * depth limit. Primitives (most writes) need no copy.
   */
  freezeCopy(value: unknown, path: readonly PathSegment[]): Json {
    if (typeof value !== "object" || value === null) {
      const primitive = jsonPrimitive(value);
      if (primitive !== undefined) {
        if (typeof primitive === "string") this.countString(primitive, path);
        else this.bytes += MAX_NUMBER_BYTES;
        return primitive;
      }
    }
    const copied = copyJson(value, this.where(path), { depth: path.length, freeze: true });
    const bound = copiedBound();
    // The path is formatted only for a value over the limit (this is the draft's hot path).
    this.bytes +=
      bound <= this.limits.valueBytes
        ? bound
        : checkedSize(copied, bound, this.limits.valueBytes, this.where(path));
    return copied;
  }

  /** Counts a string placed at `path` whole; refuses one over the value limit. */
  private countString(text: string, path: readonly PathSegment[]): void {
    let bound = stringBound(text);
    if (bound > this.limits.valueBytes)
      bound = checkedSize(text, bound, this.limits.valueBytes, this.where(path));
    this.bytes += bound;
  }

  /**
   * @internal Counts values an array method places without copying them
   * (`fill` repeats one item, `copyWithin` clones existing ones): the op
   * carries each, so each counts, and the op as a whole must be within the
   * value limit.
   */
  countRepeated(items: readonly Json[], path: readonly PathSegment[]): void {
    let bound = 2;
    for (let i = 0; i < items.length; i++) bound += jsonBound(items[i] as Json) + 1;
    if (bound > this.limits.valueBytes)
      bound = checkedSize(items as Json[], bound, this.limits.valueBytes, this.where(path));
    this.bytes += bound;
  }

  /** @internal The `get` trap. */
  read(node: DraftNode, target: Container, prop: string | symbol): unknown {
    // `await tx.doc(...)` asks every draft for `then`: answered here, not by walking the
    // prototype chain. A draft is never a thenable unless the document has a "then" key.
    // Answered before the liveness check too: a commit whose callback returns a draft
    // resolves with it after sealing revoked it, and a stored commit must not reject.
    if (prop === "then" && !hasOwn(target, prop)) return undefined;
    this.checkLive();
    if (Array.isArray(target)) {
      const index = arrayIndex(prop);
      if (index !== undefined) return index < target.length ? this.view(node, index) : undefined;
      if (typeof prop === "string" && ARRAY_MUTATORS.has(prop))
        return arrayMethod(this, node, prop);
      return Reflect.get(target, prop) as unknown;
    }
    if (typeof prop === "string" && hasOwn(target, prop)) return this.view(node, prop);
    return Reflect.get(target, prop) as unknown;
  }

  /** @internal The `set` trap. */
  write(node: DraftNode, target: Container, prop: string | symbol, value: unknown): boolean {
    this.checkLive(node);
    if (typeof prop === "symbol") throw new TypeError(`${this.at(node)}: symbol keys are not JSON`);
    if (!Array.isArray(target)) {
      if (value === undefined) this.remove(node, prop);
      else this.assign(node, prop, value);
      return true;
    }
    if (prop === "length") {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0)
        throw new RangeError(`${this.at(node)}: invalid array length`);
      if (n > target.length)
        throw new TypeError(
          `${this.at(node)}: growing length to ${n} would leave holes (not JSON)`,
        );
      this.splice(node, n, target.length - n, []);
      return true;
    }
    const index = arrayIndex(prop);
    if (index === undefined)
      throw new TypeError(
        `${this.at(node)}: arrays hold only elements, not property ${JSON.stringify(prop)}`,
      );
    if (index > target.length)
      throw new TypeError(
        `${this.where([...this.pathOf(node), index])}: past the end of an array of ${target.length} (a hole is not JSON)`,
      );
    if (index === target.length) {
      this.splice(node, index, 0, [this.freezeCopy(value, this.pathTo(node, index))]);
      return true;
    }
    if (value === undefined)
      throw new TypeError(`${this.where(this.pathTo(node, index))}: undefined is not JSON`);
    this.assign(node, index, value);
    return true;
  }

  /** @internal The `deleteProperty` trap. */
  deleteKey(node: DraftNode, target: Container, prop: string | symbol): boolean {
    this.checkLive(node);
    if (Array.isArray(target) || typeof prop === "symbol")
      throw new TypeError(
        `${this.at(node)}: delete on an array leaves a hole (not JSON); use splice`,
      );
    this.remove(node, prop);
    return true;
  }

  /** @internal The `getOwnPropertyDescriptor` trap: containers are described by their views. */
  describeKey(
    node: DraftNode,
    target: Container,
    prop: string | symbol,
  ): PropertyDescriptor | undefined {
    this.checkLive();
    const descriptor = Reflect.getOwnPropertyDescriptor(target, prop);
    if (descriptor && typeof prop === "string" && isContainer(descriptor.value)) {
      const key = Array.isArray(target) ? (arrayIndex(prop) as number) : prop;
      return { ...descriptor, value: this.view(node, key) };
    }
    return descriptor;
  }

  /** Records an op, merging consecutive appends to one string or one array end (streaming makes many). */
  private record(op: Op): void {
    if (op[0] !== "r") this.bytes += pathBound(op[1]);
    if (op[0] === "m") this.bytes += op[2].length * (MAX_NUMBER_BYTES + 1);
    const last = this.ops[this.ops.length - 1];
    if (last !== undefined) {
      if (op[0] === "a" && last[0] === "a" && samePath(op[1], last[1])) {
        this.ops[this.ops.length - 1] = ["a", last[1], last[2] + op[2]];
        return;
      }
      if (
        op[0] === "p" &&
        last[0] === "p" &&
        op[3] === 0 &&
        last[3] === 0 &&
        op[2] === last[2] + last[4].length &&
        samePath(op[1], last[1])
      ) {
        this.ops[this.ops.length - 1] = ["p", last[1], last[2], 0, [...last[4], ...op[4]]];
        return;
      }
    }
    this.ops.push(op);
  }

  private assign(node: DraftNode, key: PathSegment, value: unknown): void {
    const path = this.pathTo(node, key);
    const container = node.copy as Record<PathSegment, Json>;
    const exists = hasOwn(container, key);
    const old = exists ? container[key] : undefined;
    if (typeof old === "string" && typeof value === "string") {
      const ops = stringOps(path, old, value);
      if (ops.length > 0) this.countString(value, path); // the document holds it whole
      for (const op of ops) {
        if (op[0] === "a") this.bytes += stringBound(op[2]);
        else if (op[0] === "s") this.bytes += stringBound(op[2] as string);
        else this.bytes += MAX_NUMBER_BYTES;
        this.record(op);
      }
      this.put(node, key, value);
      return;
    }
    const next = this.freezeCopy(value, path);
    if (
      exists &&
      old !== undefined &&
      (old === next || (isContainer(old) && isContainer(next) && jsonEqual(old, next)))
    )
      return;
    node.detachChild(key);
    this.record(["s", path, next]);
    this.put(node, key, next);
  }

  private put(node: DraftNode, key: PathSegment, value: Json): void {
    if (Array.isArray(node.copy)) node.copy[key as number] = value;
    else setOwn(node.copy, key as string, value);
  }

  private remove(node: DraftNode, key: string): void {
    const container = node.copy as JsonObject;
    if (!hasOwn(container, key)) {
      this.pathOf(node); // a detached node still throws
      return;
    }
    const path = this.pathTo(node, key);
    node.detachChild(key);
    this.record(["d", path]);
    delete container[key];
  }

  /** @internal The one way arrays change length: records `p` and moves child nodes to their new indices. */
  splice(node: DraftNode, at: number, removeCount: number, items: Json[]): Json[] {
    const arr = node.copy as Json[];
    const path = this.pathOf(node);
    if (removeCount === 0 && items.length === 0) return [];
    this.record(["p", path, at, removeCount, items]);
    const removed = arr.splice(at, removeCount, ...items);
    if (node.children !== undefined && node.children.size > 0) {
      const moved = new Map<PathSegment, DraftNode>();
      for (const [k, child] of node.children) {
        const i = k as number;
        if (i < at) moved.set(i, child);
        else if (i < at + removeCount) child.detach();
        else {
          child.key = i - removeCount + items.length;
          moved.set(child.key, child);
        }
      }
      node.children = moved;
    }
    return removed;
  }

  /** @internal Reorders an array: `next[i] = previous[permutation[i]]`, recorded as `m` unless it is the identity. */
  permute(node: DraftNode, permutation: number[]): void {
    const arr = node.copy as Json[];
    const path = this.pathOf(node);
    if (permutation.every((p, i) => p === i)) return;
    this.record(["m", path, permutation.slice()]);
    const previous = arr.slice();
    for (let i = 0; i < permutation.length; i++)
      arr[i] = previous[permutation[i] as number] as Json;
    if (node.children !== undefined && node.children.size > 0) {
      const inverse = new Array<number>(permutation.length);
      permutation.forEach((p, i) => (inverse[p] = i));
      const moved = new Map<PathSegment, DraftNode>();
      for (const [k, child] of node.children) {
        child.key = inverse[k as number] as number;
        moved.set(child.key, child);
      }
      node.children = moved;
    }
  }
}
