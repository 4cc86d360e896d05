import { refuseUnknownFields } from "../domain/option-keys.js";

/** One named part of the instructions; the id lets later layers (a conversation's own) replace it. */
export interface InstructionSection {
  id: string;
  text: string;
}

/** What the model is told before the conversation: one text, or sections joined in order. */
export type Instructions = string | readonly InstructionSection[];

/**
 * Checks instructions and assembles the `system` text: a string as it is,
 * sections joined by a blank line, in order (empty ones left out).
 * Returns `undefined` when nothing is left. Throws a `TypeError` naming the
 * bad field (a section without an id, a duplicate id, a text that is not a
 * string).
 */
export function assembleInstructions(value: unknown, where: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") return value === "" ? undefined : value;
  if (!Array.isArray(value))
    throw new TypeError(`${where}: must be a string or an array of { id, text } sections`);
  const ids = new Set<string>();
  const texts: string[] = [];
  (value as unknown[]).forEach((section, i) => {
    const at = `${where}[${i}]`;
    if (typeof section !== "object" || section === null || Array.isArray(section))
      throw new TypeError(`${at}: must be { id, text }`);
    const s = section as Record<string, unknown>;
    refuseUnknownFields(s, ["id", "text"], at, "a section field");
    if (typeof s.id !== "string" || s.id === "")
      throw new TypeError(`${at}.id: must be a non-empty string`);
    if (ids.has(s.id)) throw new TypeError(`${at}.id: "${s.id}" is used by an earlier section`);
    ids.add(s.id);
    if (typeof s.text !== "string") throw new TypeError(`${at}.text: must be a string`);
    if (s.text !== "") texts.push(s.text);
  });
  return texts.length > 0 ? texts.join("\n\n") : undefined;
}

/** The id a harness's instruction string has when a conversation's sections are laid over it. */
export const BASE_SECTION = "base";

/**
 * A conversation's instructions laid over the harness's: a string replaces
 * them all; sections replace the harness's section of the same id in place
 * (an empty text removes it) and the others follow, in order. A harness
 * string counts as one section with the id "base". Both already checked.
 */
export function layerInstructions(
  harness: Instructions | undefined,
  own: Instructions | undefined,
): Instructions | undefined {
  if (own === undefined) return harness;
  if (typeof own === "string") return own;
  const base: InstructionSection[] =
    harness === undefined
      ? []
      : typeof harness === "string"
        ? [{ id: BASE_SECTION, text: harness }]
        : harness.map((s) => ({ ...s }));
  const byId = new Map(own.map((s) => [s.id, s] as const));
  const out = base.map((s) => byId.get(s.id) ?? s);
  for (const s of own) if (!base.some((b) => b.id === s.id)) out.push(s);
  return out;
}
