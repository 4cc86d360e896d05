import { DraftRevoked } from "../domain/errors.js";
import {
  cloneJson,
  copyJson,
  formatPath,
  jsonEqual,
  type Json,
  type JsonObject,
  type PathSegment,
} from "../domain/json.js";
import type { Op } from "../domain/ops.js";
import { deepFreeze } from "./freeze.js";
import { stringOps } from "./string-ops.js";
import type { DocValue } from "./tokens.js";

/** A mutable view of a document inside a transaction: the document's own type. */
export type Draft<T> = T;

type Container = JsonObject | Json[];

/**
 * One container node reached through the draft. Nodes are copied when first
 * reached (copy on access), so the proxy target is always the draft's own
 * mutable copy and the committed value, which is frozen and shared, is never
 * touched. Children remember their key so ops carry the current path even
 * after array splices move them.
 */
interface NodeState {
  copy: Container;
  parent: NodeState | undefined;
  key: PathSegment;
  children: Map<PathSegment, NodeState>;
  proxy: Container;
  /** Removed from the tree (spliced out, overwritten) or replaced with the whole value. */
  detached: boolean;
}

const ARRAY_MUTATORS = new Set([
  "push",
  "pop",
  "shift",
  "unshift",
  "splice",
  "sort",
  "reverse",
  "fill",
  "copyWithin",
]);

function arrayIndex(prop: string | symbol): number | undefined {
  if (typeof prop !== "string") return undefined;
  const n = Number(prop);
  return Number.isInteger(n) && n >= 0 && n < 4294967295 && String(n) === prop ? n : undefined;
}

function isContainer(value: unknown): value is Container {
  return typeof value === "object" && value !== null;
}

/** Assigns an own data property, also for the key "__proto__" (which `=` would treat as the prototype). */
function setOwn(target: JsonObject, key: string, value: Json): void {
  if (key === "__proto__")
    Object.defineProperty(target, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  else target[key] = value;
}

function samePath(a: readonly PathSegment[], b: readonly PathSegment[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function toInteger(value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Math.trunc(Number(value));
  return Number.isNaN(n) ? 0 : n;
}

function relativeIndex(value: unknown, length: number, fallback: number): number {
  const n = toInteger(value, fallback);
  if (n < 0) return Math.max(length + n, 0);
  return Math.min(n, length);
}

function defaultCompare(a: unknown, b: unknown): number {
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Tracks the changes made through a draft of one document as ops:
 * copy-on-access Proxy views, strict JSON checked and copied at the
 * assignment, string assignments diffed into append/trim ops, array methods
 * recorded as splices and permutations. `finish()` revokes every view and
 * returns the final frozen value with the ops that produce it from `base`.
 */
export class DraftTracker {
  readonly ops: Op[] = [];
  private root: NodeState;
  private revoked = false;
  /** A Map, not a WeakMap: it dies with the tracker, and WeakMap entries survive scavenges. */
  private readonly states = new Map<object, NodeState>();
  private readonly handler: ProxyHandler<Container>;

  constructor(
    private readonly base: DocValue,
    /** Root of error paths, e.g. the document kind: `app.notes.items[3]: NaN is not JSON`. */
    private readonly label: string,
  ) {
    this.handler = this.makeHandler();
    this.root = this.makeState(Array.isArray(base) ? base.slice() : { ...base }, undefined, "");
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
    const copied = copyJson(value, this.label, { depth: 0 });
    if (!isContainer(copied))
      throw new TypeError(`${this.label}: a document must be a JSON object or array`);
    const frozen = deepFreeze(copied);
    this.detachAll(this.root);
    this.ops.length = 0;
    this.ops.push(["r", frozen]);
    this.root = this.makeState(
      Array.isArray(frozen) ? frozen.slice() : { ...frozen },
      undefined,
      "",
    );
    return this.root.proxy;
  }

  /** Revokes every view; returns the final value (frozen, sharing untouched parts with `base`) and the ops. */
  finish(): { value: DocValue; ops: Op[] } {
    this.revoked = true;
    if (this.ops.length === 0) return { value: this.base, ops: this.ops };
    return { value: deepFreeze(this.root.copy as Json) as DocValue, ops: this.ops };
  }

  /** Revokes every view without producing a value (the callback threw). */
  revoke(): void {
    this.revoked = true;
  }

  private checkLive(state?: NodeState): void {
    if (this.revoked)
      throw new DraftRevoked(`${this.label}: the draft was used after its commit callback settled`);
    if (state?.detached)
      throw new DraftRevoked(
        `${this.label}: this part of the draft was removed or replaced; read it again from the draft`,
      );
  }

  private makeState(copy: Container, parent: NodeState | undefined, key: PathSegment): NodeState {
    const state: NodeState = {
      copy,
      parent,
      key,
      children: new Map(),
      proxy: copy,
      detached: false,
    };
    state.proxy = new Proxy(copy, this.handler);
    this.states.set(copy, state);
    return state;
  }

  private detachAll(state: NodeState): void {
    state.detached = true;
    for (const child of state.children.values()) this.detachAll(child);
  }

  private detachChild(state: NodeState, key: PathSegment): void {
    const child = state.children.get(key);
    if (child) {
      this.detachAll(child);
      state.children.delete(key);
    }
  }

  private pathOf(state: NodeState): PathSegment[] {
    const path: PathSegment[] = [];
    for (let s: NodeState | undefined = state; s?.parent; s = s.parent) {
      if (s.detached) this.checkLive(s);
      path.push(s.key);
    }
    return path.reverse();
  }

  private where(path: readonly PathSegment[]): string {
    return formatPath(this.label, path);
  }

  /** Records an op, merging consecutive appends to one string or one array end (streaming makes many). */
  private record(op: Op): void {
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

  /** The view of child `key`: containers are copied on first access and proxied; primitives as they are. */
  private view(state: NodeState, key: PathSegment): unknown {
    const raw = (state.copy as Record<PathSegment, Json>)[key];
    if (!isContainer(raw)) return raw;
    const existing = state.children.get(key);
    if (existing && existing.copy === raw) return existing.proxy;
    const copy = Array.isArray(raw) ? raw.slice() : { ...raw };
    if (Array.isArray(state.copy)) state.copy[key as number] = copy;
    else setOwn(state.copy, key as string, copy);
    const child = this.makeState(copy, state, key);
    state.children.set(key, child);
    return child.proxy;
  }

  /** A value placed at `path`: the document counts as a whole, so the containers above it count too. */
  private freezeCopy(value: unknown, path: readonly PathSegment[]): Json {
    return deepFreeze(copyJson(value, this.where(path), { depth: path.length }));
  }

  private assign(state: NodeState, key: PathSegment, value: unknown): void {
    const parentPath = this.pathOf(state);
    const path = [...parentPath, key];
    const container = state.copy as Record<PathSegment, Json>;
    const exists = Object.prototype.hasOwnProperty.call(container, key);
    const old = exists ? container[key] : undefined;
    if (typeof old === "string" && typeof value === "string") {
      const ops = stringOps(path, old, value);
      for (const op of ops) this.record(op);
      if (Array.isArray(state.copy)) state.copy[key as number] = value;
      else setOwn(state.copy, key as string, value);
      return;
    }
    const next = this.freezeCopy(value, path);
    if (
      exists &&
      old !== undefined &&
      (old === next || (isContainer(old) && isContainer(next) && jsonEqual(old, next)))
    )
      return;
    this.detachChild(state, key);
    this.record(["s", path, next]);
    if (Array.isArray(state.copy)) state.copy[key as number] = next;
    else setOwn(state.copy, key as string, next);
  }

  private remove(state: NodeState, key: string): void {
    const path = this.pathOf(state);
    const container = state.copy as JsonObject;
    if (!Object.prototype.hasOwnProperty.call(container, key)) return;
    this.detachChild(state, key);
    this.record(["d", [...path, key]]);
    delete container[key];
  }

  /** The one way arrays change length: records `p` and moves child states to their new indices. */
  private splice(state: NodeState, at: number, removeCount: number, items: Json[]): Json[] {
    const arr = state.copy as Json[];
    const path = this.pathOf(state);
    if (removeCount === 0 && items.length === 0) return [];
    this.record(["p", path, at, removeCount, items]);
    const removed = arr.splice(at, removeCount, ...items);
    if (state.children.size > 0) {
      const moved = new Map<PathSegment, NodeState>();
      for (const [k, child] of state.children) {
        const i = k as number;
        if (i < at) moved.set(i, child);
        else if (i < at + removeCount) this.detachAll(child);
        else {
          child.key = i - removeCount + items.length;
          moved.set(child.key, child);
        }
      }
      state.children = moved;
    }
    return removed;
  }

  /** Reorders an array: `next[i] = previous[permutation[i]]`, recorded as `m` unless it is the identity. */
  private permute(state: NodeState, permutation: number[]): void {
    const arr = state.copy as Json[];
    const path = this.pathOf(state);
    if (permutation.every((p, i) => p === i)) return;
    this.record(["m", path, permutation.slice()]);
    const previous = arr.slice();
    for (let i = 0; i < permutation.length; i++)
      arr[i] = previous[permutation[i] as number] as Json;
    if (state.children.size > 0) {
      const inverse = new Array<number>(permutation.length);
      permutation.forEach((p, i) => (inverse[p] = i));
      const moved = new Map<PathSegment, NodeState>();
      for (const [k, child] of state.children) {
        child.key = inverse[k as number] as number;
        moved.set(child.key, child);
      }
      state.children = moved;
    }
  }

  /** Detached plain copies of removed elements, so mutating them cannot reach the draft. */
  private released(items: Json[]): Json[] {
    return items.map((item) => cloneJson(item));
  }

  private arrayMethod(state: NodeState, name: string): (...args: unknown[]) => unknown {
    const arr = (): Json[] => state.copy as Json[];
    const newItems = (values: unknown[], from: number): Json[] => {
      const path = this.pathOf(state);
      return values.map((v, i) => this.freezeCopy(v, [...path, from + i]));
    };
    switch (name) {
      case "push":
        return (...values) => {
          this.checkLive(state);
          this.splice(state, arr().length, 0, newItems(values, arr().length));
          return arr().length;
        };
      case "unshift":
        return (...values) => {
          this.checkLive(state);
          this.splice(state, 0, 0, newItems(values, 0));
          return arr().length;
        };
      case "pop":
        return () => {
          this.checkLive(state);
          if (arr().length === 0) return undefined;
          return this.released(this.splice(state, arr().length - 1, 1, []))[0];
        };
      case "shift":
        return () => {
          this.checkLive(state);
          if (arr().length === 0) return undefined;
          return this.released(this.splice(state, 0, 1, []))[0];
        };
      case "splice":
        return (...args) => {
          this.checkLive(state);
          const length = arr().length;
          const start = relativeIndex(args[0], length, 0);
          const removeCount =
            args.length === 0
              ? 0
              : args.length === 1
                ? length - start
                : Math.min(Math.max(toInteger(args[1], 0), 0), length - start);
          return this.released(
            this.splice(state, start, removeCount, newItems(args.slice(2), start)),
          );
        };
      case "fill":
        return (value, startArg, endArg) => {
          this.checkLive(state);
          const length = arr().length;
          const start = relativeIndex(startArg, length, 0);
          const end = relativeIndex(endArg, length, length);
          if (end > start) {
            const [item] = newItems([value], start);
            this.splice(state, start, end - start, new Array<Json>(end - start).fill(item as Json));
          }
          return state.proxy;
        };
      case "copyWithin":
        return (targetArg, startArg, endArg) => {
          this.checkLive(state);
          const length = arr().length;
          const target = relativeIndex(targetArg, length, 0);
          const start = relativeIndex(startArg, length, 0);
          const end = relativeIndex(endArg, length, length);
          const count = Math.min(end - start, length - target);
          if (count > 0) {
            const items = arr()
              .slice(start, start + count)
              .map((item) => deepFreeze(cloneJson(item)));
            this.splice(state, target, count, items);
          }
          return state.proxy;
        };
      case "reverse":
        return () => {
          this.checkLive(state);
          const n = arr().length;
          this.permute(
            state,
            Array.from({ length: n }, (_, i) => n - 1 - i),
          );
          return state.proxy;
        };
      case "sort":
        return (compare) => {
          this.checkLive(state);
          if (compare !== undefined && typeof compare !== "function")
            throw new TypeError(
              `${this.where(this.pathOf(state))}: sort comparator must be a function`,
            );
          const n = arr().length;
          const views = Array.from({ length: n }, (_, i) => this.view(state, i));
          const cmp =
            (compare as ((a: unknown, b: unknown) => number) | undefined) ?? defaultCompare;
          const order = Array.from({ length: n }, (_, i) => i).sort((a, b) =>
            cmp(views[a], views[b]),
          );
          this.permute(state, order);
          return state.proxy;
        };
      default:
        throw new TypeError(`unknown array method ${name}`);
    }
  }

  private makeHandler(): ProxyHandler<Container> {
    const stateOf = (target: Container): NodeState => this.states.get(target) as NodeState;
    return {
      get: (target, prop) => {
        const state = stateOf(target);
        this.checkLive();
        if (Array.isArray(target)) {
          const index = arrayIndex(prop);
          if (index !== undefined)
            return index < target.length ? this.view(state, index) : undefined;
          if (typeof prop === "string" && ARRAY_MUTATORS.has(prop))
            return this.arrayMethod(state, prop);
          return Reflect.get(target, prop) as unknown;
        }
        if (typeof prop === "string" && Object.prototype.hasOwnProperty.call(target, prop))
          return this.view(state, prop);
        return Reflect.get(target, prop) as unknown;
      },
      set: (target, prop, value) => {
        const state = stateOf(target);
        this.checkLive(state);
        if (typeof prop === "symbol")
          throw new TypeError(`${this.where(this.pathOf(state))}: symbol keys are not JSON`);
        if (Array.isArray(target)) {
          if (prop === "length") {
            const n = Number(value);
            if (!Number.isInteger(n) || n < 0)
              throw new RangeError(`${this.where(this.pathOf(state))}: invalid array length`);
            if (n > target.length)
              throw new TypeError(
                `${this.where(this.pathOf(state))}: growing length to ${n} would leave holes (not JSON)`,
              );
            this.splice(state, n, target.length - n, []);
            return true;
          }
          const index = arrayIndex(prop);
          if (index === undefined)
            throw new TypeError(
              `${this.where(this.pathOf(state))}: arrays hold only elements, not property ${JSON.stringify(prop)}`,
            );
          if (index > target.length)
            throw new TypeError(
              `${this.where([...this.pathOf(state), index])}: past the end of an array of ${target.length} (a hole is not JSON)`,
            );
          if (index === target.length) {
            this.splice(state, index, 0, [this.freezeCopy(value, [...this.pathOf(state), index])]);
            return true;
          }
          if (value === undefined)
            throw new TypeError(
              `${this.where([...this.pathOf(state), index])}: undefined is not JSON`,
            );
          this.assign(state, index, value);
          return true;
        }
        if (value === undefined) this.remove(state, prop);
        else this.assign(state, prop, value);
        return true;
      },
      deleteProperty: (target, prop) => {
        const state = stateOf(target);
        this.checkLive(state);
        if (Array.isArray(target) || typeof prop === "symbol")
          throw new TypeError(
            `${this.where(this.pathOf(state))}: delete on an array leaves a hole (not JSON); use splice`,
          );
        this.remove(state, prop);
        return true;
      },
      defineProperty: (target) => {
        const state = stateOf(target);
        this.checkLive(state);
        throw new TypeError(
          `${this.where(this.pathOf(state))}: define properties on a draft by assignment`,
        );
      },
      getOwnPropertyDescriptor: (target, prop) => {
        const state = stateOf(target);
        this.checkLive();
        const descriptor = Reflect.getOwnPropertyDescriptor(target, prop);
        if (descriptor && typeof prop === "string" && isContainer(descriptor.value)) {
          const key = Array.isArray(target) ? (arrayIndex(prop) as number) : prop;
          return { ...descriptor, value: this.view(state, key) };
        }
        return descriptor;
      },
      has: (target, prop) => {
        this.checkLive();
        return Reflect.has(target, prop);
      },
      ownKeys: (target) => {
        this.checkLive();
        return Reflect.ownKeys(target);
      },
      setPrototypeOf: (target) => {
        throw new TypeError(
          `${this.where(this.pathOf(stateOf(target)))}: a draft keeps its prototype`,
        );
      },
      preventExtensions: (target) => {
        throw new TypeError(
          `${this.where(this.pathOf(stateOf(target)))}: a draft cannot be frozen or sealed`,
        );
      },
    };
  }
}
