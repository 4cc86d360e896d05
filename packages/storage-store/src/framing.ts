import { StorageCorrupted } from "@durably/core";
import { crcHex, crcJoined } from "./crc32c.js";

/**
 * Value framing (README "Value framing"): every stored value is eight
 * lowercase hex digits, the CRC-32C of the UTF-8 bytes of the key, one zero
 * byte and the payload, followed by the payload. The key is part of the sum,
 * so a value that turns up under another key (a damaged key byte in a table
 * file) fails the check like a damaged value does.
 */

const HEX = /^[0-9a-f]{8}$/;

/** The checksum field of `payload` stored under `key`. */
export function checksum(key: string, payload: string): string {
  return crcHex(crcJoined(key, payload));
}

export function frame(key: string, payload: string): string {
  return checksum(key, payload) + payload;
}

/** The payload of a stored value, after checking its sum; a mismatch is `StorageCorrupted` naming the key. */
export function unframe(key: string, raw: string): string {
  const stored = raw.slice(0, 8);
  const payload = raw.slice(8);
  if (!HEX.test(stored))
    throw new StorageCorrupted(
      `key ${key}: stored value has no checksum (${preview(raw)}): the value or its key is damaged`,
      { key },
    );
  const computed = checksum(key, payload);
  if (computed !== stored)
    throw new StorageCorrupted(
      `key ${key}: checksum mismatch (stored ${stored}, computed ${computed}): the value or its key is damaged: ${preview(payload)}`,
      { key },
    );
  return payload;
}

function preview(text: string): string {
  return JSON.stringify(text.length > 120 ? text.slice(0, 120) + "…" : text);
}
