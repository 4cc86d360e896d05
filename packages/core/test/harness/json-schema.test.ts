import { describe, expect, it } from "vitest";
import { checkSchema, validateSchema, type JsonSchema } from "../../src/index.js";

const Person: JsonSchema = {
  type: "object",
  properties: {
    name: { type: "string", description: "full name" },
    age: { type: "integer" },
    role: { enum: ["admin", "user"] },
    tags: { type: "array", items: { type: "string" } },
    address: {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    },
    nickname: { type: ["string", "null"] },
  },
  required: ["name", "age"],
};

describe("checkSchema", () => {
  it("accepts the supported subset with annotations", () => {
    expect(() => checkSchema(Person, "parameters")).not.toThrow();
  });

  it("refuses an unsupported keyword, naming where it is", () => {
    const schema = { type: "object", properties: { a: { type: "array", contains: {} } } };
    expect(() => checkSchema(schema, "parameters")).toThrow(
      /^parameters\.properties\.a\.contains: unsupported JSON Schema keyword/,
    );
  });

  it("refuses an unknown type, a malformed subschema and an empty enum", () => {
    expect(() => checkSchema({ type: "float" }, "s")).toThrow(/s\.type: unknown type "float"/);
    expect(() => checkSchema({ type: ["string", "date"] }, "s")).toThrow(
      /s\.type\[1\]: unknown type/,
    );
    expect(() => checkSchema({ additionalProperties: 3 }, "s")).toThrow(
      /s\.additionalProperties: a schema must be a plain object/,
    );
    expect(() => checkSchema({ enum: [] }, "s")).toThrow(/s\.enum: must be a non-empty array/);
    expect(() => checkSchema({ items: 3 }, "s")).toThrow(
      /s\.items: a schema must be a plain object/,
    );
    expect(() => checkSchema({ required: ["a", 1] }, "s")).toThrow(/s\.required: must be an array/);
  });
});

describe("validateSchema", () => {
  const valid = { name: "Ada", age: 36, role: "admin", tags: ["x"], address: { city: "London" } };

  it("accepts a conforming value", () => {
    expect(validateSchema(Person, valid, "arguments")).toBeUndefined();
    expect(validateSchema(Person, { ...valid, nickname: null }, "arguments")).toBeUndefined();
  });

  it("reports a missing required property by path", () => {
    expect(validateSchema(Person, { name: "Ada" }, "arguments")).toEqual({
      path: "arguments.age",
      message: "required property is missing",
    });
  });

  it("reports a wrong type, telling expected and actual", () => {
    expect(validateSchema(Person, { ...valid, age: 36.5 }, "arguments")).toEqual({
      path: "arguments.age",
      message: "expected integer, got number",
    });
    expect(validateSchema(Person, [], "arguments")).toEqual({
      path: "arguments",
      message: "expected object, got array",
    });
    expect(validateSchema(Person, { ...valid, nickname: 3 }, "arguments")?.message).toBe(
      "expected string or null, got number",
    );
  });

  it("reports an enum violation", () => {
    expect(validateSchema(Person, { ...valid, role: "root" }, "arguments")).toEqual({
      path: "arguments.role",
      message: 'must be one of "admin", "user"',
    });
  });

  it("reports the path into arrays and nested objects", () => {
    expect(validateSchema(Person, { ...valid, tags: ["a", "b", 3] }, "arguments")?.path).toBe(
      "arguments.tags[2]",
    );
    expect(validateSchema(Person, { ...valid, address: {} }, "arguments")?.path).toBe(
      "arguments.address.city",
    );
  });

  it("refuses extra properties only where additionalProperties is false", () => {
    expect(validateSchema(Person, { ...valid, extra: 1 }, "arguments")).toBeUndefined();
    expect(
      validateSchema(Person, { ...valid, address: { city: "Paris", zip: "75" } }, "arguments"),
    ).toEqual({
      path: "arguments.address.zip",
      message: "property is not allowed (additionalProperties is false)",
    });
  });

  it("reports the first violation in document order", () => {
    // required (in listed order) before the properties present
    expect(validateSchema(Person, { role: "x" }, "a")?.path).toBe("a.name");
    // properties in the value's key order
    expect(validateSchema(Person, { ...valid, tags: [1], age: "old" }, "a")?.path).toBe("a.age");
  });

  it("treats NaN and Infinity as not numbers and quotes odd keys in the path", () => {
    const schema: JsonSchema = { type: "object", properties: { "a b": { type: "number" } } };
    expect(validateSchema(schema, { "a b": Number.NaN }, "arguments")?.path).toBe(
      'arguments["a b"]',
    );
  });
});
