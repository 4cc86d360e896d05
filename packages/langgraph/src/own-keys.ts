/*
 * Names LangGraph hands the saver as object keys (checkpoint namespaces,
 * channel names, metadata keys) may be keys of `Object.prototype`
 * ("constructor", "toString", "__proto__"). Lookups read own properties only,
 * and writes define `__proto__` as an ordinary own key (plain assignment would
 * call the prototype setter and drop the value). Core keeps such a key as an
 * own key in stored documents and entries, and JSON text round-trips it.
 */

/** `record[key]` when `record` has it as an own property, else undefined. */
export function ownValue<T>(record: { readonly [key: string]: T }, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** `record[key] = value`, `__proto__` included, as an own enumerable data property. */
export function setOwn<T>(record: { [key: string]: T }, key: string, value: T): void {
  if (key === "__proto__")
    Object.defineProperty(record, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  else record[key] = value;
}
