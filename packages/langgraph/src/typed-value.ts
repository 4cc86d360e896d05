import { JsonPlusSerializer, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import type { ChannelValue } from "./documents.js";
import { CheckpointDataCorrupted } from "./errors.js";
import { flatten } from "./pages.js";

/**
 * A serialized value as strict JSON. LangGraph's serializer turns a value
 * into `[type, bytes]` (`"json"` and UTF-8 JSON text for almost everything);
 * stored as:
 *
 * - `{ type: "json", text }`: the serializer's JSON text, kept as a string
 *   (Durably never parses or re-encodes it, so it reads back byte for byte);
 * - `{ type, base64 }`: any other type (e.g. `"bytes"` for a raw Uint8Array),
 *   or bytes that are not UTF-8.
 *
 * Growing channels kept in documents use `ChannelValue` (documents.ts)
 * instead: the text of each array item, or the string itself.
 */
export type Typed = { type: string; text: string } | { type: string; base64: string };

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** True when `serde` is exactly LangGraph's default serializer (not a subclass that may change it). */
export function itemizes(serde: SerializerProtocol): boolean {
  return Object.getPrototypeOf(serde) === JsonPlusSerializer.prototype;
}

/** Serializes `value` with `serde`, stored whole. */
export async function encodeTyped(serde: SerializerProtocol, value: unknown): Promise<Typed> {
  const [type, bytes] = await serde.dumpsTyped(value);
  if (type === "json") {
    try {
      return { type, text: decoder.decode(bytes) };
    } catch {
      // not UTF-8: keep the bytes
    }
  }
  return { type, base64: toBase64(bytes) };
}

/**
 * The JSON text of each item of `items` as JsonPlusSerializer writes it inside
 * an array: the text of `[item]` without its brackets (so `undefined`, a
 * Uint8Array or a class instance come out exactly as in the whole array).
 */
export async function encodeItems(
  serde: SerializerProtocol,
  items: readonly unknown[],
): Promise<string[]> {
  const texts: string[] = [];
  for (const item of items) {
    const [type, bytes] = await serde.dumpsTyped([item]);
    const text = type === "json" ? decoder.decode(bytes) : "";
    if (text.length < 2 || text[0] !== "[" || text[text.length - 1] !== "]")
      throw new TypeError(
        `serializer wrote an array as ${type} ${JSON.stringify(text.slice(0, 40))}`,
      );
    texts.push(text.slice(1, -1));
  }
  return texts;
}

/** Turns a stored value back into the live value, through the serializer. */
export function decodeTyped(
  serde: SerializerProtocol,
  typed: Typed,
  where: string,
): Promise<unknown> {
  if ("text" in typed && typeof typed.text === "string")
    return serde.loadsTyped(typed.type, typed.text);
  if ("base64" in typed && typeof typed.base64 === "string")
    return serde.loadsTyped(typed.type, fromBase64(typed.base64, where));
  throw new CheckpointDataCorrupted(`${where}: not a stored serialized value`);
}

/** A channel document's value back into the live value (its JSON text through the serializer). */
export function decodeChannelValue(
  serde: SerializerProtocol,
  value: ChannelValue,
  where: string,
): Promise<unknown> {
  if ("pages" in value && Array.isArray(value.pages))
    return serde.loadsTyped("json", `[${flatten(value.pages).join(",")}]`);
  if ("string" in value && typeof value.string === "string")
    return serde.loadsTyped("json", JSON.stringify(value.string));
  throw new CheckpointDataCorrupted(`${where}: not a stored channel value`);
}

/** Checks the shape of a stored serialized value (read back from storage). */
export function isTyped(value: unknown): value is Typed {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return typeof v.type === "string" && (typeof v.text === "string" || typeof v.base64 === "string");
}

const CHUNK = 0x8000;

/** Node's Buffer when there is one (a 25 MiB value: 0.1 s, against seconds in the portable loop). */
const NodeBuffer = (
  globalThis as {
    Buffer?: {
      from(
        b: ArrayBufferLike,
        offset: number,
        length: number,
      ): { toString(encoding: "base64"): string };
    };
  }
).Buffer;

/** Base64, through Node's Buffer when present, else portable (browsers: IndexedDB storage). */
export function toBase64(bytes: Uint8Array): string {
  if (NodeBuffer !== undefined)
    return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
  return portableBase64(bytes);
}

/** @internal Base64 without Node's Buffer (exported for the test that compares both). */
export function portableBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += CHUNK)
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(binary);
}

export function fromBase64(text: string, where: string): Uint8Array {
  let binary: string;
  try {
    binary = atob(text);
  } catch (error) {
    throw new CheckpointDataCorrupted(`${where}: invalid base64`, { cause: error });
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
