import { formatPath, type PathSegment } from "../domain/json.js";
import type { JsonSchema } from "./json-schema.js";

const TYPES = new Set<string>([
  "object",
  "array",
  "string",
  "number",
  "integer",
  "boolean",
  "null",
]);

/** Keywords whose value is one subschema. */
const ONE_SCHEMA = ["not", "additionalProperties", "propertyNames", "additionalItems"];
/** Keywords whose value is a non-empty list of subschemas. */
const SCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];
/** Keywords whose value is an object of subschemas. */
const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions"];
const COUNTS = ["minProperties", "maxProperties", "minItems", "maxItems", "minLength", "maxLength"];
const NUMBERS = ["minimum", "maximum"];
const STRINGS = ["$schema", "$id", "$comment", "title", "description", "format"];
const BOOLEANS = ["nullable", "uniqueItems", "deprecated", "readOnly", "writeOnly"];
const ANY_JSON = ["const", "default"];

const KEYWORDS = new Set([
  "type",
  "enum",
  "required",
  "items",
  "examples",
  "$ref",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "pattern",
  ...ONE_SCHEMA,
  ...SCHEMA_LISTS,
  ...SCHEMA_MAPS,
  ...COUNTS,
  ...NUMBERS,
  ...STRINGS,
  ...BOOLEANS,
  ...ANY_JSON,
]);

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Compiles a `pattern` the way validation runs it (Unicode mode; plain mode for patterns only it accepts). */
export function compilePattern(pattern: string): RegExp {
  try {
    return new RegExp(pattern, "u");
  } catch {
    return new RegExp(pattern);
  }
}

/**
 * Resolves a local `$ref` (`#` or a `#/...` JSON pointer) in `root`;
 * `undefined` when it points nowhere. Anything but a local reference is
 * `undefined` too.
 */
export function resolveRef(root: unknown, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    let token: string;
    try {
      token = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    } catch {
      return undefined;
    }
    if (Array.isArray(node)) node = /^\d+$/.test(token) ? node[Number(token)] : undefined;
    else if (isPlainObject(node) && Object.prototype.hasOwnProperty.call(node, token))
      node = node[token];
    else return undefined;
  }
  return node;
}

interface Check {
  readonly root: unknown;
  readonly where: string;
}

/**
 * Checks that `schema` uses only the supported keywords, correctly, and
 * that every `$ref` points at a schema in the same document. Throws a
 * `TypeError` naming the offending place under `root` (e.g.
 * `tool "add": parameters.properties.a.type`).
 */
export function checkSchema(schema: unknown, root = "schema"): asserts schema is JsonSchema {
  if (!isPlainObject(schema)) throw new TypeError(`${root}: a schema must be a plain object`);
  checkAt(schema, { root: schema, where: root }, []);
}

function checkSub(schema: unknown, check: Check, path: PathSegment[]): void {
  if (typeof schema === "boolean") return;
  checkAt(schema, check, path);
}

function checkAt(schema: unknown, check: Check, path: PathSegment[]): void {
  const here = (...more: PathSegment[]): string => formatPath(check.where, [...path, ...more]);
  if (!isPlainObject(schema))
    throw new TypeError(`${here()}: a schema must be a plain object (or true / false)`);
  for (const key of Object.keys(schema))
    if (!KEYWORDS.has(key))
      throw new TypeError(
        `${here(key)}: unsupported JSON Schema keyword (supported: ${[...KEYWORDS].join(", ")})`,
      );
  const { type } = schema;
  if (type !== undefined) {
    const list: unknown[] = Array.isArray(type) ? type : [type];
    if (list.length === 0) throw new TypeError(`${here("type")}: must not be an empty list`);
    list.forEach((t, i) => {
      if (typeof t !== "string" || !TYPES.has(t))
        throw new TypeError(
          `${Array.isArray(type) ? here("type", i) : here("type")}: unknown type ${JSON.stringify(t)} (one of ${[...TYPES].join(", ")})`,
        );
    });
  }
  for (const key of ONE_SCHEMA)
    if (schema[key] !== undefined) checkSub(schema[key], check, [...path, key]);
  for (const key of SCHEMA_LISTS) {
    const list = schema[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.length === 0)
      throw new TypeError(`${here(key)}: must be a non-empty array of schemas`);
    list.forEach((sub, i) => checkSub(sub, check, [...path, key, i]));
  }
  for (const key of SCHEMA_MAPS) {
    const map = schema[key];
    if (map === undefined) continue;
    if (!isPlainObject(map)) throw new TypeError(`${here(key)}: must be an object of schemas`);
    for (const [name, sub] of Object.entries(map)) {
      if (key === "patternProperties") checkPattern(name, here(key, name));
      checkSub(sub, check, [...path, key, name]);
    }
  }
  if (schema.items !== undefined) {
    if (Array.isArray(schema.items))
      schema.items.forEach((sub, i) => checkSub(sub, check, [...path, "items", i]));
    else checkSub(schema.items, check, [...path, "items"]);
  }
  if (schema.required !== undefined) {
    if (!Array.isArray(schema.required) || !schema.required.every((r) => typeof r === "string"))
      throw new TypeError(`${here("required")}: must be an array of property names`);
  }
  if (schema.enum !== undefined && (!Array.isArray(schema.enum) || schema.enum.length === 0))
    throw new TypeError(`${here("enum")}: must be a non-empty array`);
  if (schema.examples !== undefined && !Array.isArray(schema.examples))
    throw new TypeError(`${here("examples")}: must be an array`);
  for (const key of COUNTS)
    if (
      schema[key] !== undefined &&
      !(Number.isSafeInteger(schema[key]) && (schema[key] as number) >= 0)
    )
      throw new TypeError(`${here(key)}: must be a non-negative integer`);
  for (const key of NUMBERS)
    if (
      schema[key] !== undefined &&
      !(typeof schema[key] === "number" && Number.isFinite(schema[key]))
    )
      throw new TypeError(`${here(key)}: must be a number`);
  for (const key of ["exclusiveMinimum", "exclusiveMaximum"]) {
    const v = schema[key];
    if (v !== undefined && typeof v !== "boolean" && !(typeof v === "number" && Number.isFinite(v)))
      throw new TypeError(`${here(key)}: must be a number (or, draft 04, a boolean)`);
  }
  if (
    schema.multipleOf !== undefined &&
    !(
      typeof schema.multipleOf === "number" &&
      Number.isFinite(schema.multipleOf) &&
      schema.multipleOf > 0
    )
  )
    throw new TypeError(`${here("multipleOf")}: must be a number above 0`);
  for (const key of STRINGS)
    if (schema[key] !== undefined && typeof schema[key] !== "string")
      throw new TypeError(`${here(key)}: must be a string`);
  for (const key of BOOLEANS)
    if (schema[key] !== undefined && typeof schema[key] !== "boolean")
      throw new TypeError(`${here(key)}: must be true or false`);
  if (schema.pattern !== undefined) {
    if (typeof schema.pattern !== "string")
      throw new TypeError(`${here("pattern")}: must be a string`);
    checkPattern(schema.pattern, here("pattern"));
  }
  if (schema.$ref !== undefined) {
    if (typeof schema.$ref !== "string") throw new TypeError(`${here("$ref")}: must be a string`);
    if (schema.$ref !== "#" && !schema.$ref.startsWith("#/"))
      throw new TypeError(
        `${here("$ref")}: only references inside the same schema ("#", "#/$defs/...") are supported, got ${JSON.stringify(schema.$ref)}`,
      );
    const target = resolveRef(check.root, schema.$ref);
    if (typeof target !== "boolean" && !isPlainObject(target))
      throw new TypeError(`${here("$ref")}: ${JSON.stringify(schema.$ref)} points at no schema`);
  }
}

function checkPattern(pattern: string, where: string): void {
  try {
    compilePattern(pattern);
  } catch (error) {
    throw new TypeError(`${where}: not a valid regular expression (${(error as Error).message})`, {
      cause: error,
    });
  }
}
