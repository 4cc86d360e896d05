import { copyJson } from "../domain/json.js";
import type { JsonSchema } from "./json-schema.js";

/** One problem a Standard Schema found, as its `validate` reports it. */
export interface StandardIssue {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}

/** What a Standard Schema's `validate` returns (or resolves with). */
export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: readonly StandardIssue[] };

/**
 * The Standard Schema v1 interface (standardschema.dev), which zod 4,
 * valibot and arktype schemas carry under `~standard`, plus the Standard
 * JSON Schema extension (`~standard.jsonSchema`) that zod 4 and arktype
 * implement and valibot offers through `toStandardJsonSchema`. Described
 * here, not imported: core depends on no schema library.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly jsonSchema?: {
      readonly input: (options: { readonly target: string }) => Record<string, unknown>;
    };
  };
}

/** A Standard Schema that cannot give JSON Schema itself, with the JSON Schema to send the model. */
export interface SchemaWithJsonSchema<Output = unknown> {
  schema: StandardSchemaV1<unknown, Output>;
  jsonSchema: JsonSchema;
}

/** Whether `value` carries a Standard Schema v1 interface (schemas may be functions: arktype's are). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  const standard = (value as { "~standard"?: { version?: unknown; validate?: unknown } })[
    "~standard"
  ];
  return (
    typeof standard === "object" &&
    standard !== null &&
    standard.version === 1 &&
    typeof standard.validate === "function"
  );
}

/**
 * The JSON Schema a Standard Schema gives for its input (draft 2020-12),
 * as plain JSON. A `TypeError` when it has no `~standard.jsonSchema` (say
 * which fallback to use) or gives something that is not JSON.
 */
export function standardJsonSchema(schema: StandardSchemaV1, where: string): JsonSchema {
  const standard = schema["~standard"];
  const converter = standard.jsonSchema;
  if (typeof converter?.input !== "function")
    throw new TypeError(
      `${where}: this ${standard.vendor} schema gives no JSON Schema (it has no ~standard.jsonSchema); pass { schema, jsonSchema } with the JSON Schema for the model (for valibot, @valibot/to-json-schema's toStandardJsonSchema(schema) also works)`,
    );
  let produced: unknown;
  try {
    produced = converter.input({ target: "draft-2020-12" });
  } catch (error) {
    throw new TypeError(
      `${where}: the ${standard.vendor} schema could not give JSON Schema: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return copyJson(produced, `${where} (JSON Schema from ${standard.vendor})`) as JsonSchema;
}

function describePath(path: StandardIssue["path"]): string {
  if (!path || path.length === 0) return "";
  return path
    .map((segment) => {
      const key = typeof segment === "object" && segment !== null ? segment.key : segment;
      return typeof key === "number" ? `[${key}]` : `.${String(key)}`;
    })
    .join("");
}

/**
 * Validates with a Standard Schema. Resolves with the parsed value, or with
 * a message listing the issues with their paths (`root.a[2]: message`).
 */
export async function standardValidate(
  schema: StandardSchemaV1,
  value: unknown,
  root: string,
): Promise<{ value: unknown } | { problem: string }> {
  const result = await schema["~standard"].validate(value);
  if (result.issues === undefined) return { value: result.value };
  const problems = result.issues
    .slice(0, 5)
    .map((issue) => `${root}${describePath(issue.path)}: ${issue.message}`);
  const more = result.issues.length > 5 ? `; and ${result.issues.length - 5} more` : "";
  return { problem: `${problems.join("; ")}${more}` };
}
