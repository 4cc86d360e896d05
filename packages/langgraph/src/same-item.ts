/*
 * Whether a stored item and a newly serialized one are the same value. Equal
 * text is the common case. Otherwise both are parsed and compared as values:
 * key order does not matter, and a key holding the serializer's `undefined`
 * record equals an absent key. A message loaded from storage and serialized
 * again differs from its first serialization in exactly these ways (e.g. a
 * ToolMessage's undefined `artifact`), and must not count as changed.
 */

type Value = null | boolean | number | string | Value[] | { [key: string]: Value };

export function sameItem(stored: string, next: string): boolean {
  if (stored === next) return true;
  try {
    return sameValue(JSON.parse(stored) as Value, JSON.parse(next) as Value);
  } catch {
    return false;
  }
}

function isUndefinedRecord(value: Value | undefined): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    value.lc === 2 &&
    value.type === "undefined" &&
    Object.keys(value).length === 2
  );
}

function sameValue(a: Value | undefined, b: Value | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  const has = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const x = has(a, key) ? a[key] : undefined;
    const y = has(b, key) ? b[key] : undefined;
    if (x === undefined || y === undefined) {
      if (!isUndefinedRecord(x ?? y)) return false;
    } else if (!sameValue(x, y)) return false;
  }
  return true;
}
