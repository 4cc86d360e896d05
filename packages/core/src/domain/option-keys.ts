/**
 * How a value looks in an error message: a number as it is, a string
 * quoted (so `"1"` and `1` read differently), anything else by its type.
 */
export function described(value: unknown): string {
  if (typeof value === "number" || value === undefined || value === null) return String(value);
  if (typeof value === "string") return `${JSON.stringify(value)} (a string)`;
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "function") return "a function";
  if (typeof value === "symbol") return `${value.toString()} (a symbol)`;
  return `${value as boolean | bigint} (a ${typeof value})`;
}

/**
 * Checks that `value` is a plain object whose keys are all in `fields`
 * (nothing silently ignored): a `TypeError` naming where, the unknown key
 * and the valid ones, as `configure` words it (`where: key is not what
 * (a, b, c)`). `path` is the object's own name (`settings`), prefixed to
 * the key; absent, it is the call's options. Returns the object.
 */
export function checkKeys(
  value: unknown,
  fields: readonly string[],
  where: string,
  { path, what = "an option" }: { path?: string; what?: string } = {},
): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new TypeError(
      `${where}: ${path ?? "options"} must be an object { ${fields.join(", ")} }, got ${described(value)}`,
    );
  for (const key of Object.keys(value))
    if (!fields.includes(key))
      throw new TypeError(
        `${where}: ${path !== undefined ? `${path}.` : ""}${key} is not ${what} (${fields.join(", ")})`,
      );
  return value as Record<string, unknown>;
}

/**
 * Refuses a key of a checked object that is not one of `fields`, naming it
 * with its object's path: `where.key: not <what> (a, b, c)`, `what` with
 * its article ("an error field"). For the nested declarations (retry
 * settings, prices, sections, scripted turns) whose shape the caller has
 * checked already; `checkKeys` words the call options' own refusals.
 */
export function refuseUnknownFields(
  value: object,
  fields: readonly string[],
  where: string,
  what: string,
): void {
  for (const key of Object.keys(value))
    if (!fields.includes(key))
      throw new TypeError(`${where}.${key}: not ${what} (${fields.join(", ")})`);
}

/**
 * A settings object's fields that are set: one given as `undefined` is
 * left out, as if it were not there, so that it takes its default (an
 * optional value passed through, `{ maxAttempts: config.retries }`).
 */
export function setFields<T extends object>(value: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [key, field] of Object.entries(value))
    if (field !== undefined) (out as Record<string, unknown>)[key] = field;
  return out;
}
