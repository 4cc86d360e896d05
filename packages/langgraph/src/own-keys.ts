/*
 * Names LangGraph hands the saver as object keys (checkpoint namespaces,
 * channel names, metadata keys) may be keys of `Object.prototype`
 * ("constructor", "toString", "__proto__"). Lookups read own properties only;
 * writes go through core's `setOwn`, which defines `__proto__` as an ordinary
 * own key (plain assignment would call the prototype setter and drop the
 * value), as core keeps it in stored documents and entries.
 */

/** `record[key]` when `record` has it as an own property, else undefined. */
export function ownValue<T>(record: { readonly [key: string]: T }, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
