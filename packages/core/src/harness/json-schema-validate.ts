import { formatPath, jsonEqual, type Json, type PathSegment } from "../domain/json.js";
import { compilePattern, isPlainObject, resolveRef } from "./json-schema-check.js";
import type { JsonSchema, JsonSchemaType, JsonSubschema, SchemaViolation } from "./json-schema.js";

/** `$ref`s followed without the value getting deeper: past this, a schema refers to itself forever. */
const MAX_REF_HOPS = 64;

interface Run {
  readonly root: JsonSchema;
  readonly where: string;
  readonly patterns: Map<string, RegExp>;
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

const codePoints = (text: string): number => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

/**
 * Validates `value` against a schema already accepted by `checkSchema`.
 * Returns the first violation in document order (references, combinators,
 * type, const and enum, then the keywords of the value's kind: number and
 * string bounds, required properties in the order listed, each present
 * property, array size and items), or `undefined` when the value conforms.
 */
export function validateSchema(
  schema: JsonSchema,
  value: unknown,
  root = "value",
): SchemaViolation | undefined {
  return validateSub({ root: schema, where: root, patterns: new Map() }, schema, value, [], 0);
}

function validateSub(
  run: Run,
  schema: JsonSubschema,
  value: unknown,
  path: PathSegment[],
  hops: number,
): SchemaViolation | undefined {
  if (schema === true) return undefined;
  const at = (message: string, ...more: PathSegment[]): SchemaViolation => ({
    path: formatPath(run.where, [...path, ...more]),
    message,
  });
  if (schema === false) return at("no value is allowed here");
  if (schema.nullable === true && value === null) return undefined;
  if (schema.$ref !== undefined) {
    if (hops >= MAX_REF_HOPS)
      return at(
        `the schema refers to itself through $ref ${MAX_REF_HOPS} times without going deeper`,
      );
    const target = resolveRef(run.root, schema.$ref) as JsonSubschema;
    const violation = validateSub(run, target, value, path, hops + 1);
    if (violation) return violation;
  }
  return (
    combinators(run, schema, value, path, hops, at) ??
    generic(schema, value, at) ??
    (typeof value === "number" ? numeric(schema, value, at) : undefined) ??
    (typeof value === "string" ? textual(run, schema, value, at) : undefined) ??
    (isPlainObject(value) ? object(run, schema, value, path, at) : undefined) ??
    (Array.isArray(value) ? array(run, schema, value, path, at) : undefined)
  );
}

type At = (message: string, ...more: PathSegment[]) => SchemaViolation;

function combinators(
  run: Run,
  schema: JsonSchema,
  value: unknown,
  path: PathSegment[],
  hops: number,
  at: At,
): SchemaViolation | undefined {
  for (const sub of schema.allOf ?? []) {
    const violation = validateSub(run, sub, value, path, hops);
    if (violation) return violation;
  }
  if (schema.anyOf !== undefined) {
    const failures = schema.anyOf.map((sub) => validateSub(run, sub, value, path, hops));
    if (failures.every((f) => f !== undefined))
      return at(`matches none of the ${failures.length} allowed shapes (${explain(failures)})`);
  }
  if (schema.oneOf !== undefined) {
    const failures = schema.oneOf.map((sub) => validateSub(run, sub, value, path, hops));
    const matched = failures.filter((f) => f === undefined).length;
    if (matched === 0)
      return at(`matches none of the ${failures.length} allowed shapes (${explain(failures)})`);
    if (matched > 1) return at(`matches ${matched} of the oneOf shapes; exactly one must match`);
  }
  if (schema.not !== undefined && validateSub(run, schema.not, value, path, hops) === undefined)
    return at("matches a shape that is not allowed (not)");
  return undefined;
}

/** The alternatives' violations, numbered, for a message the model can act on. */
function explain(failures: readonly (SchemaViolation | undefined)[]): string {
  return failures
    .map((f, i) => `${i + 1}: ${f ? `${f.path}: ${f.message}` : "matched"}`)
    .join("; ");
}

function generic(schema: JsonSchema, value: unknown, at: At): SchemaViolation | undefined {
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => matchesType(value, t)))
      return at(`expected ${types.join(" or ")}, got ${typeOf(value)}`);
  }
  if (schema.const !== undefined && !jsonEqual(schema.const, value as Json))
    return at(`must be ${JSON.stringify(schema.const)}`);
  if (schema.enum !== undefined && !schema.enum.some((option) => jsonEqual(option, value as Json)))
    return at(`must be one of ${schema.enum.map((o) => JSON.stringify(o)).join(", ")}`);
  return undefined;
}

function numeric(schema: JsonSchema, value: number, at: At): SchemaViolation | undefined {
  const { minimum, maximum, exclusiveMinimum: exMin, exclusiveMaximum: exMax } = schema;
  if (minimum !== undefined) {
    if (exMin === true ? value <= minimum : value < minimum)
      return at(`must be ${exMin === true ? "above" : "at least"} ${minimum}`);
  }
  if (maximum !== undefined) {
    if (exMax === true ? value >= maximum : value > maximum)
      return at(`must be ${exMax === true ? "below" : "at most"} ${maximum}`);
  }
  if (typeof exMin === "number" && value <= exMin) return at(`must be above ${exMin}`);
  if (typeof exMax === "number" && value >= exMax) return at(`must be below ${exMax}`);
  if (schema.multipleOf !== undefined) {
    const quotient = value / schema.multipleOf;
    // Decimal steps (0.1) are not exact in binary: allow a rounding error.
    if (Math.abs(quotient - Math.round(quotient)) > 1e-9 * Math.max(1, Math.abs(quotient)))
      return at(`must be a multiple of ${schema.multipleOf}`);
  }
  return undefined;
}

function textual(run: Run, schema: JsonSchema, value: string, at: At): SchemaViolation | undefined {
  if (schema.minLength !== undefined || schema.maxLength !== undefined) {
    const length = codePoints(value);
    if (schema.minLength !== undefined && length < schema.minLength)
      return at(`must be at least ${schema.minLength} characters long, is ${length}`);
    if (schema.maxLength !== undefined && length > schema.maxLength)
      return at(`must be at most ${schema.maxLength} characters long, is ${length}`);
  }
  if (schema.pattern !== undefined && !pattern(run, schema.pattern).test(value))
    return at(`must match the pattern ${schema.pattern}`);
  return undefined;
}

function pattern(run: Run, source: string): RegExp {
  let compiled = run.patterns.get(source);
  if (!compiled) run.patterns.set(source, (compiled = compilePattern(source)));
  return compiled;
}

function object(
  run: Run,
  schema: JsonSchema,
  value: Record<string, unknown>,
  path: PathSegment[],
  at: At,
): SchemaViolation | undefined {
  for (const name of schema.required ?? [])
    if (!Object.prototype.hasOwnProperty.call(value, name) || value[name] === undefined)
      return at("required property is missing", name);
  const names = Object.keys(value);
  if (schema.minProperties !== undefined && names.length < schema.minProperties)
    return at(`must have at least ${schema.minProperties} properties, has ${names.length}`);
  if (schema.maxProperties !== undefined && names.length > schema.maxProperties)
    return at(`must have at most ${schema.maxProperties} properties, has ${names.length}`);
  const properties = schema.properties ?? {};
  const patterns = Object.entries(schema.patternProperties ?? {});
  for (const name of names) {
    if (schema.propertyNames !== undefined) {
      const violation = validateSub(run, schema.propertyNames, name, [...path, name], 0);
      if (violation) return at(`the property name is not allowed: ${violation.message}`, name);
    }
    const item = value[name];
    let matched = false;
    if (Object.prototype.hasOwnProperty.call(properties, name)) {
      matched = true;
      const violation = validateSub(
        run,
        properties[name] as JsonSubschema,
        item,
        [...path, name],
        0,
      );
      if (violation) return violation;
    }
    for (const [source, sub] of patterns) {
      if (!pattern(run, source).test(name)) continue;
      matched = true;
      const violation = validateSub(run, sub, item, [...path, name], 0);
      if (violation) return violation;
    }
    if (matched || schema.additionalProperties === undefined) continue;
    if (schema.additionalProperties === false)
      return at("property is not allowed (additionalProperties is false)", name);
    const violation = validateSub(run, schema.additionalProperties, item, [...path, name], 0);
    if (violation) return violation;
  }
  return undefined;
}

function array(
  run: Run,
  schema: JsonSchema,
  value: readonly unknown[],
  path: PathSegment[],
  at: At,
): SchemaViolation | undefined {
  if (schema.minItems !== undefined && value.length < schema.minItems)
    return at(`must have at least ${schema.minItems} items, has ${value.length}`);
  if (schema.maxItems !== undefined && value.length > schema.maxItems)
    return at(`must have at most ${schema.maxItems} items, has ${value.length}`);
  if (schema.uniqueItems === true)
    for (let i = 1; i < value.length; i++)
      for (let j = 0; j < i; j++)
        if (jsonEqual(value[i] as Json, value[j] as Json))
          return at(`items must be unique: item ${i} repeats item ${j}`, i);
  // Positional schemas: 2020-12 `prefixItems` (then `items` for the rest), or draft 07's `items` list (then `additionalItems`).
  const positional = schema.prefixItems ?? (Array.isArray(schema.items) ? schema.items : []);
  const rest = schema.prefixItems
    ? (schema.items as JsonSubschema | undefined)
    : Array.isArray(schema.items)
      ? schema.additionalItems
      : schema.items;
  for (let i = 0; i < value.length; i++) {
    const sub = i < positional.length ? positional[i] : rest;
    if (sub === undefined) continue;
    if (sub === false) return at(`no item is allowed at position ${i}`, i);
    const violation = validateSub(run, sub, value[i], [...path, i], 0);
    if (violation) return violation;
  }
  return undefined;
}
