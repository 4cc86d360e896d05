import {
  defineDoc,
  ROOT_CONVERSATION_ID,
  Session,
  type EntryRecord,
  type Json,
  type SessionOptions,
} from "@durably/core";
import type { Check } from "../storage/support.js";
import { FaultInjector } from "./faults.js";

export const ROOT = ROOT_CONVERSATION_ID;

/** The document the scenarios edit: a conversation document with text and a list. */
export const Notes = defineDoc<{ text: string; items: number[] }>({
  kind: "conformance.notes",
  version: 1,
  scope: "conversation",
  initial: () => ({ text: "", items: [] }),
});

export async function openSession(
  storage: FaultInjector,
  check: Check,
  options: SessionOptions = {},
): Promise<Session> {
  try {
    return await Session.open(storage, {
      settings: { progress: { persistWithinMs: 60_000 } },
      ...options,
    });
  } catch (error) {
    return check.fail(`Session.open over the storage rejected: ${String(error)}`);
  }
}

export async function entryKinds(storage: FaultInjector): Promise<string[]> {
  const page = await storage.inner.scanEntries({ conversationId: ROOT, order: "ascending" }, 100);
  return page.items.map((e: EntryRecord) => e.kind);
}

export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return undefined;
}

export function nameOf(error: unknown): string {
  return error instanceof Error ? error.name : String(error);
}

/** `levels` arrays around `leaf`: nested(0) is the leaf, nested(2) is [[leaf]]. Built without recursion. */
export function nested(levels: number, leaf: Json = 0): Json {
  let value: Json = leaf;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

/** The path suffix of `n` first-element steps: `[0][0]...`. */
export function firstElements(n: number): string {
  return "[0]".repeat(n);
}
