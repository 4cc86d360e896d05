import type { ContentPart } from "../domain/records.js";

const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Checks message content given by a caller (a submitted input, a tool's
 * result): a string, or an array of `{ type: "text", text }` and
 * `{ type: "image", mediaType, data }` parts, `data` being base64. Returns a
 * copy; throws a `TypeError` naming the path of the first bad field.
 */
export function checkContent(value: unknown, where: string): string | ContentPart[] {
  if (typeof value === "string") return value;
  if (!Array.isArray(value))
    throw new TypeError(`${where}: must be a string or an array of text and image parts`);
  return (value as unknown[]).map((part, i): ContentPart => {
    const at = `${where}[${i}]`;
    if (typeof part !== "object" || part === null || Array.isArray(part))
      throw new TypeError(
        `${at}: must be { type: "text", text } or { type: "image", mediaType, data }`,
      );
    const p = part as Record<string, unknown>;
    const allowed = p.type === "text" ? ["type", "text"] : ["type", "mediaType", "data"];
    for (const key of Object.keys(p))
      if (!allowed.includes(key))
        throw new TypeError(`${at}.${key}: not a field of a ${String(p.type)} part`);
    if (p.type === "text") {
      if (typeof p.text !== "string") throw new TypeError(`${at}.text: must be a string`);
      return { type: "text", text: p.text };
    }
    if (p.type === "image") {
      if (typeof p.mediaType !== "string" || !MEDIA_TYPE.test(p.mediaType))
        throw new TypeError(`${at}.mediaType: must be a media type such as "image/png"`);
      if (typeof p.data !== "string" || p.data.length % 4 !== 0 || !BASE64.test(p.data))
        throw new TypeError(
          `${at}.data: must be base64 (without a "data:" prefix), got ${typeof p.data === "string" ? `${p.data.length} characters that are not` : typeof p.data}`,
        );
      return { type: "image", mediaType: p.mediaType, data: p.data };
    }
    throw new TypeError(`${at}.type: must be "text" or "image", got ${JSON.stringify(p.type)}`);
  });
}

/** The text of a content (images shown as `[image <mediaType>]`), for logs, counts and demos. */
export function contentText(content: string | readonly ContentPart[]): string {
  if (typeof content === "string") return content;
  return content.map((p) => (p.type === "text" ? p.text : `[image ${p.mediaType}]`)).join("");
}
