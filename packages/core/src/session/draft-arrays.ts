import { cloneJson, type Json } from "../domain/json.js";
import type { DraftTracker } from "./draft.js";
import type { DraftNode } from "./draft-node.js";
import { deepFreeze } from "./freeze.js";

/** Array methods that change the array: a draft records each as a splice (`p`) or permutation (`m`). */
export const ARRAY_MUTATORS = new Set([
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

/** Detached plain copies of removed elements, so mutating them cannot reach the draft. */
function released(items: Json[]): Json[] {
  return items.map((item) => cloneJson(item));
}

/**
 * The draft's version of array method `name` on `node`, following the
 * built-in's argument rules, routed through the tracker's splice and
 * permute so every change is recorded and reached children keep their paths.
 */
export function arrayMethod(
  tracker: DraftTracker,
  node: DraftNode,
  name: string,
): (...args: unknown[]) => unknown {
  const arr = (): Json[] => node.copy as Json[];
  const newItems = (values: unknown[], from: number): Json[] => {
    const path = tracker.pathOf(node);
    return values.map((v, i) => tracker.freezeCopy(v, [...path, from + i]));
  };
  switch (name) {
    case "push":
      return (...values) => {
        tracker.checkLive(node);
        tracker.splice(node, arr().length, 0, newItems(values, arr().length));
        return arr().length;
      };
    case "unshift":
      return (...values) => {
        tracker.checkLive(node);
        tracker.splice(node, 0, 0, newItems(values, 0));
        return arr().length;
      };
    case "pop":
      return () => {
        tracker.checkLive(node);
        if (arr().length === 0) return undefined;
        return released(tracker.splice(node, arr().length - 1, 1, []))[0];
      };
    case "shift":
      return () => {
        tracker.checkLive(node);
        if (arr().length === 0) return undefined;
        return released(tracker.splice(node, 0, 1, []))[0];
      };
    case "splice":
      return (...args) => {
        tracker.checkLive(node);
        const length = arr().length;
        const start = relativeIndex(args[0], length, 0);
        const removeCount =
          args.length === 0
            ? 0
            : args.length === 1
              ? length - start
              : Math.min(Math.max(toInteger(args[1], 0), 0), length - start);
        return released(tracker.splice(node, start, removeCount, newItems(args.slice(2), start)));
      };
    case "fill":
      return (value, startArg, endArg) => {
        tracker.checkLive(node);
        const length = arr().length;
        const start = relativeIndex(startArg, length, 0);
        const end = relativeIndex(endArg, length, length);
        if (end > start) {
          const [item] = newItems([value], start);
          const items = new Array<Json>(end - start).fill(item as Json);
          tracker.countRepeated(items.slice(1), tracker.pathOf(node));
          tracker.splice(node, start, end - start, items);
        }
        return node.proxy;
      };
    case "copyWithin":
      return (targetArg, startArg, endArg) => {
        tracker.checkLive(node);
        const length = arr().length;
        const target = relativeIndex(targetArg, length, 0);
        const start = relativeIndex(startArg, length, 0);
        const end = relativeIndex(endArg, length, length);
        const count = Math.min(end - start, length - target);
        if (count > 0) {
          const items = arr()
            .slice(start, start + count)
            .map((item) => deepFreeze(cloneJson(item)));
          tracker.countRepeated(items, tracker.pathOf(node));
          tracker.splice(node, target, count, items);
        }
        return node.proxy;
      };
    case "reverse":
      return () => {
        tracker.checkLive(node);
        const n = arr().length;
        tracker.permute(
          node,
          Array.from({ length: n }, (_, i) => n - 1 - i),
        );
        return node.proxy;
      };
    case "sort":
      return (compare) => {
        tracker.checkLive(node);
        if (compare !== undefined && typeof compare !== "function")
          throw new TypeError(`${tracker.at(node)}: sort comparator must be a function`);
        const n = arr().length;
        const views = Array.from({ length: n }, (_, i) => tracker.view(node, i));
        const cmp = (compare as ((a: unknown, b: unknown) => number) | undefined) ?? defaultCompare;
        const order = Array.from({ length: n }, (_, i) => i).sort((a, b) =>
          cmp(views[a], views[b]),
        );
        tracker.permute(node, order);
        return node.proxy;
      };
    default:
      throw new TypeError(`unknown array method ${name}`);
  }
}
