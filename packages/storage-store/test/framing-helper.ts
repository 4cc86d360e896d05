/**
 * The value framing as the README documents it, written independently of
 * the package (bit by bit, through Buffer's UTF-8): eight lowercase hex
 * digits of the CRC-32C of `key`, a zero byte and the payload, then the
 * payload. Tests use it to forge well-framed values and to check the format.
 */
export function checksumOf(key: string, payload: string): string {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(`${key}\0${payload}`, "utf8")) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return ((crc ^ 0xffffffff) >>> 0).toString(16).padStart(8, "0");
}

export const framed = (key: string, payload: string): string => checksumOf(key, payload) + payload;
