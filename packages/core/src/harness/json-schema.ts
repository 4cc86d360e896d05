import type { Json } from "../domain/json.js";

export type JsonSchemaType =
  "object" | "array" | "string" | "number" | "integer" | "boolean" | "null";

/** A schema in a nested position: an object schema, or `true` (anything) / `false` (nothing). */
export type JsonSubschema = JsonSchema | boolean;

/**
 * The JSON Schema tool parameters use: what schema generators (zod 4's
 * `z.toJSONSchema`, valibot's and arktype's converters) emit for tool
 * arguments, drafts 2020-12 and 07 and OpenAPI 3.0's `nullable`. Every
 * assertion here is checked by `validateSchema`; `format` and the
 * annotations are accepted and not checked. Any other keyword is refused
 * by `checkSchema`, so a schema never promises a check that does not run.
 */
export interface JsonSchema {
  type?: JsonSchemaType | JsonSchemaType[];
  enum?: Json[];
  const?: Json;
  /** OpenAPI 3.0: `null` is accepted too. */
  nullable?: boolean;
  anyOf?: JsonSubschema[];
  oneOf?: JsonSubschema[];
  allOf?: JsonSubschema[];
  not?: JsonSubschema;
  /** A local reference: `#`, `#/$defs/Name`, `#/definitions/Name` or any `#/...` pointer into the same schema. */
  $ref?: string;
  $defs?: { [name: string]: JsonSubschema };
  definitions?: { [name: string]: JsonSubschema };
  // objects
  properties?: { [name: string]: JsonSubschema };
  required?: string[];
  additionalProperties?: JsonSubschema;
  patternProperties?: { [pattern: string]: JsonSubschema };
  propertyNames?: JsonSubschema;
  minProperties?: number;
  maxProperties?: number;
  // arrays
  /** A schema for every item (or, draft 07, a list: one schema per position). */
  items?: JsonSubschema | JsonSubschema[];
  prefixItems?: JsonSubschema[];
  /** Draft 07: items after a positional `items` list. */
  additionalItems?: JsonSubschema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  // numbers
  minimum?: number;
  maximum?: number;
  /** A number (2020-12, 07), or a boolean applying to `minimum` (draft 04 and OpenAPI 3.0). */
  exclusiveMinimum?: number | boolean;
  exclusiveMaximum?: number | boolean;
  multipleOf?: number;
  // strings
  /** In code points. */
  minLength?: number;
  maxLength?: number;
  /** An ECMAScript regular expression (Unicode mode), not anchored. */
  pattern?: string;
  /** Accepted, not checked (an annotation here). */
  format?: string;
  // annotations
  $schema?: string;
  $id?: string;
  $comment?: string;
  title?: string;
  description?: string;
  default?: Json;
  examples?: Json[];
  deprecated?: boolean;
  readOnly?: boolean;
  writeOnly?: boolean;
}

/** Where a value breaks its schema: `path` names the place (e.g. `arguments.items[2]`). */
export interface SchemaViolation {
  readonly path: string;
  readonly message: string;
}

export { checkSchema } from "./json-schema-check.js";
export { validateSchema } from "./json-schema-validate.js";
