import { formatPath, jsonEqual, type Json, type PathSegment } from "../domain/json.js";

export type JsonSchemaType =
  "object" | "array" | "string" | "number" | "integer" | "boolean" | "null";

/**
 * The JSON Schema subset tool parameters use: `type`, `properties`,
 * `required`, `additionalProperties: false`, `items`, `enum`, plus the
 * annotations `description`, `title`, `default` and `examples` (ignored by
 * validation). Anything else is refused when the tool is defined, so a
 * schema never promises a check that does not happen.
 */
export interface JsonSchema {
  type?: JsonSchemaType | JsonSchemaType[];
  properties?: { [name: string]: JsonSchema };
  required?: string[];
  additionalProperties?: boolean;
  items?: JsonSchema;
  enum?: Json[];
  description?: string;
  title?: string;
  default?: Json;
  examples?: Json[];
}

/** Where a value breaks its schema: `path` names the place (e.g. `arguments.items[2]`). */
export interface SchemaViolation {
  readonly path: string;
  readonly message: string;
}

const TYPES = new Set<string>([
  "object",
  "array",
  "string",
  "number",
  "integer",
  "boolean",
  "null",
]);
const KEYWORDS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "description",
  "title",
  "default",
  "examples",
]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Checks that `schema` uses only the supported subset, correctly. Throws a
 * `TypeError` naming the offending place under `root` (e.g.
 * `tool "add": parameters.properties.a.type`).
 */
export function checkSchema(schema: unknown, root = "schema"): asserts schema is JsonSchema {
  checkAt(schema, root, []);
}

function checkAt(schema: unknown, root: string, path: PathSegment[]): void {
  const here = (...more: PathSegment[]): string => formatPath(root, [...path, ...more]);
  if (!isPlainObject(schema)) throw new TypeError(`${here()}: a schema must be a plain object`);
  for (const key of Object.keys(schema)) {
    if (!KEYWORDS.has(key))
      throw new TypeError(
        `${here(key)}: unsupported JSON Schema keyword (supported: ${[...KEYWORDS].join(", ")})`,
      );
  }
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
  if (schema.properties !== undefined) {
    if (!isPlainObject(schema.properties))
      throw new TypeError(`${here("properties")}: must be an object of schemas`);
    for (const [name, sub] of Object.entries(schema.properties))
      checkAt(sub, root, [...path, "properties", name]);
  }
  if (schema.required !== undefined) {
    if (!Array.isArray(schema.required) || !schema.required.every((r) => typeof r === "string"))
      throw new TypeError(`${here("required")}: must be an array of property names`);
  }
  if (schema.additionalProperties !== undefined && typeof schema.additionalProperties !== "boolean")
    throw new TypeError(
      `${here("additionalProperties")}: only true or false is supported (not a schema)`,
    );
  if (schema.items !== undefined) checkAt(schema.items, root, [...path, "items"]);
  if (schema.enum !== undefined) {
    if (!Array.isArray(schema.enum) || schema.enum.length === 0)
      throw new TypeError(`${here("enum")}: must be a non-empty array`);
  }
  if (schema.description !== undefined && typeof schema.description !== "string")
    throw new TypeError(`${here("description")}: must be a string`);
  if (schema.title !== undefined && typeof schema.title !== "string")
    throw new TypeError(`${here("title")}: must be a string`);
  if (schema.examples !== undefined && !Array.isArray(schema.examples))
    throw new TypeError(`${here("examples")}: must be an array`);
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function matchesType(value: unknown, type: JsonSchemaType): boolean {
  switch (type) {
    case "object":
      return isPlainObject(value);
    case "array":
      return Array.isArray(value);
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
  }
}

/**
 * Validates `value` against a schema already accepted by `checkSchema`.
 * Returns the first violation in document order (type, enum, required
 * properties in the order listed, then each present property, then array
 * items), or `undefined` when the value conforms.
 */
export function validateSchema(
  schema: JsonSchema,
  value: unknown,
  root = "value",
): SchemaViolation | undefined {
  return validateAt(schema, value, root, []);
}

function validateAt(
  schema: JsonSchema,
  value: unknown,
  root: string,
  path: PathSegment[],
): SchemaViolation | undefined {
  const at = (message: string, ...more: PathSegment[]): SchemaViolation => ({
    path: formatPath(root, [...path, ...more]),
    message,
  });
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => matchesType(value, t)))
      return at(`expected ${types.join(" or ")}, got ${typeOf(value)}`);
  }
  if (schema.enum !== undefined) {
    const allowed = schema.enum;
    if (!allowed.some((option) => jsonEqual(option, value as Json)))
      return at(`must be one of ${allowed.map((o) => JSON.stringify(o)).join(", ")}`);
  }
  if (isPlainObject(value)) {
    for (const name of schema.required ?? [])
      if (!Object.prototype.hasOwnProperty.call(value, name) || value[name] === undefined)
        return at("required property is missing", name);
    const properties = schema.properties ?? {};
    for (const [name, item] of Object.entries(value)) {
      const sub = Object.prototype.hasOwnProperty.call(properties, name)
        ? properties[name]
        : undefined;
      if (sub) {
        const violation = validateAt(sub, item, root, [...path, name]);
        if (violation) return violation;
      } else if (schema.additionalProperties === false) {
        return at("property is not allowed (additionalProperties is false)", name);
      }
    }
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    for (let i = 0; i < value.length; i++) {
      const violation = validateAt(schema.items, value[i], root, [...path, i]);
      if (violation) return violation;
    }
  }
  return undefined;
}
