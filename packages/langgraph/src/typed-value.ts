import type { Json } from "@durably/core";
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { CheckpointDataCorrupted } from "./errors.js";

/**
 * A serialized value as strict JSON. LangGraph's serializer returns
 * `[type, bytes]`; `"json"` bytes whose text round-trips exactly through
 * `JSON.parse`/`JSON.stringify` are stored parsed (so arrays and strings can be
 * stored as deltas); any other type, or JSON text that would not round-trip
 * exactly (e.g. integers beyond 2^53 from a custom serializer), is stored as
 * base64 of the bytes.
 */
export type Typed = { type: "json"; json: Json } | { type: string; base64: string };

const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** Serializes `value` with `serde` and stores the result as strict JSON. */
export async function encodeTyped(serde: SerializerProtocol, value: unknown): Promise<Typed> {
  const [type, bytes] = await serde.dumpsTyped(value);
  return typedFromBytes(type, bytes);
}

export function typedFromBytes(type: string, bytes: Uint8Array): Typed {
  if (type === "json") {
    const parsed = parseExactly(bytes);
    if (parsed !== undefined) return { type: "json", json: parsed.value };
  }
  return { type, base64: toBase64(bytes) };
}

/** The JSON value of `bytes` if re-stringifying it gives the same text, else undefined. */
function parseExactly(bytes: Uint8Array): { value: Json } | undefined {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return undefined; // not UTF-8: keep the bytes
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return JSON.stringify(value) === text ? { value: value as Json } : undefined;
}

/** Turns a stored value back into what the serializer produced, then into the live value. */
export async function decodeTyped(
  serde: SerializerProtocol,
  typed: Typed,
  where: string,
): Promise<unknown> {
  if ("json" in typed && typed.type === "json")
    return serde.loadsTyped("json", JSON.stringify(typed.json));
  if ("base64" in typed && typeof typed.base64 === "string")
    return serde.loadsTyped(typed.type, fromBase64(typed.base64, where));
  throw new CheckpointDataCorrupted(`${where}: not a stored serialized value`);
}

/** Checks the shape of a stored serialized value (read back from storage). */
export function isTyped(value: unknown): value is Typed {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  if (typeof v.type !== "string") return false;
  if (v.type === "json" && "json" in v) return true;
  return typeof v.base64 === "string";
}

const CHUNK = 0x8000;

/** Base64 without Node's Buffer, so the package also runs in browsers (IndexedDB storage). */
export function toBase64(bytes: Uint8Array): string {
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

/** UTF-8 bytes of a string (for serializers that return text). */
export const utf8 = (text: string): Uint8Array => encoder.encode(text);
