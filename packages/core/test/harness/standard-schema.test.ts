import { toStandardJsonSchema, toJsonSchema } from "@valibot/to-json-schema";
import { type as arktype } from "arktype";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  checkSchema,
  defineTool,
  Harness,
  runToolCall,
  ScriptedModel,
  toolsByName,
  validateSchema,
  type ConversationId,
  type JsonSchema,
  type ToolApi,
} from "../../src/index.js";
import { MemoryStorage } from "../support/memory.js";

const api = (): ToolApi => ({
  signal: new AbortController().signal,
  toolCallId: "c1",
  conversationId: 1 as ConversationId,
  attempt: 1,
  output: () => Promise.resolve(),
  commit: () => Promise.reject(new Error("not in a harness")),
  memo: () => Promise.reject(new Error("not in a harness")),
  runConversation: () => Promise.reject(new Error("not in a harness")),
});

const call = (name: string, args: Record<string, unknown>) => ({
  type: "toolCall" as const,
  id: "c1",
  name,
  arguments: args as never,
});

const Booking = z.object({
  room: z.string().min(1).describe("the room's name"),
  guests: z.number().int().min(1).max(4),
  kind: z.enum(["single", "double"]),
  note: z.string().nullable(),
  extras: z.array(z.object({ item: z.string(), qty: z.number() })).default([]),
  when: z.union([z.iso.date(), z.literal("now")]),
  email: z.email().optional(),
});

describe("zod 4's JSON Schema is in the supported subset", () => {
  it("accepts what z.toJSONSchema emits and validates by it", () => {
    const schema = z.toJSONSchema(Booking) as JsonSchema;
    expect(() => checkSchema(schema, "parameters")).not.toThrow();
    const good = { room: "blue", guests: 2, kind: "double", note: null, extras: [], when: "now" };
    expect(validateSchema(schema, good, "arguments")).toBeUndefined();
    expect(validateSchema(schema, { ...good, guests: 5 }, "arguments")).toEqual({
      path: "arguments.guests",
      message: "must be at most 4",
    });
    expect(validateSchema(schema, { ...good, kind: "triple" }, "arguments")?.message).toBe(
      'must be one of "single", "double"',
    );
    expect(validateSchema(schema, { ...good, when: "tomorrow" }, "arguments")?.message).toMatch(
      /^matches none of the 2 allowed shapes \(1: arguments\.when: must match the pattern .*; 2: arguments\.when: must be "now"\)$/,
    );
    expect(validateSchema(schema, { ...good, email: "not an email" }, "arguments")?.path).toBe(
      "arguments.email",
    );
    expect(validateSchema(schema, { ...good, extra: 1 }, "arguments")?.message).toBe(
      "property is not allowed (additionalProperties is false)",
    );
  });

  it("follows local $refs: shared definitions ($defs) and recursion (#)", () => {
    const Point = z.object({ x: z.number(), y: z.number() }).meta({ id: "Point" });
    const Tree: z.ZodType<{ name: string; children?: unknown[] }> = z.object({
      name: z.string(),
      get children() {
        return z.array(Tree).optional();
      },
    });
    const shapes = z.toJSONSchema(z.object({ from: Point, to: Point })) as JsonSchema;
    expect(shapes.$defs).toBeDefined();
    checkSchema(shapes, "s");
    expect(validateSchema(shapes, { from: { x: 1, y: 2 }, to: { x: 1 } }, "a")).toEqual({
      path: "a.to.y",
      message: "required property is missing",
    });
    const tree = z.toJSONSchema(Tree) as JsonSchema;
    checkSchema(tree, "s");
    expect(
      validateSchema(tree, { name: "a", children: [{ name: "b", children: [{ name: 3 }] }] }, "t"),
    ).toEqual({ path: "t.children[0].children[0].name", message: "expected string, got number" });
  });

  it("understands oneOf, const, nullable (OpenAPI 3.0), tuples and not", () => {
    const schema: JsonSchema = {
      type: "object",
      properties: {
        shape: {
          oneOf: [
            {
              type: "object",
              properties: { k: { const: "circle" }, r: { type: "number" } },
              required: ["k"],
            },
            { type: "object", properties: { k: { const: "dot" } }, required: ["k"] },
          ],
        },
        label: { type: "string", nullable: true },
        pair: {
          type: "array",
          prefixItems: [{ type: "string" }, { type: "number" }],
          items: false,
        },
        never: { not: {} },
      },
    };
    checkSchema(schema, "s");
    expect(
      validateSchema(schema, { shape: { k: "dot" }, label: null, pair: ["a", 1] }, "a"),
    ).toBeUndefined();
    expect(validateSchema(schema, { shape: { k: "square" } }, "a")?.path).toBe("a.shape");
    expect(validateSchema(schema, { pair: ["a", 1, 2] }, "a")).toEqual({
      path: "a.pair[2]",
      message: "no item is allowed at position 2",
    });
    expect(validateSchema(schema, { never: 1 }, "a")?.message).toBe(
      "matches a shape that is not allowed (not)",
    );
  });

  it("refuses a reference outside the schema, or one pointing nowhere", () => {
    expect(() => checkSchema({ $ref: "https://example.com/s.json" }, "s")).toThrow(
      /s\.\$ref: only references inside the same schema/,
    );
    expect(() => checkSchema({ $ref: "#/$defs/Nope" }, "s")).toThrow(/points at no schema/);
    expect(() => checkSchema({ pattern: "(" }, "s")).toThrow(
      /s\.pattern: not a valid regular expression/,
    );
  });
});

describe("tools with a Standard Schema", () => {
  it("takes a zod 4 schema: JSON Schema from ~standard.jsonSchema for the model, zod validates and parses the arguments", async () => {
    let seen: unknown;
    const book = defineTool({
      name: "book",
      description: "Book a room",
      parameters: Booking,
      replay: "unsafe",
      execute: (args) => {
        seen = args; // typed: args.guests is a number, args.extras defaults to []
        return { content: `booked ${args.room} for ${args.guests}, ${args.extras.length} extras` };
      },
    });
    expect(book.parameters).toMatchObject({
      type: "object",
      properties: { room: { type: "string", description: "the room's name" } },
    });
    expect(book.schema).toBe(Booking);
    const tools = toolsByName([book]);
    const ok = await runToolCall(
      tools,
      call("book", { room: "blue", guests: 2, kind: "single", note: null, when: "now" }),
      api(),
    );
    expect(ok).toMatchObject({ isError: false, content: "booked blue for 2, 0 extras" });
    expect(seen).toMatchObject({ extras: [] }); // zod's default, applied by its parse
    const bad = await runToolCall(
      tools,
      call("book", { room: "", guests: 9, kind: "single", note: null, when: "now" }),
      api(),
    );
    expect(bad.isError).toBe(true);
    expect(bad.content).toMatch(
      /^error: invalid arguments for "book": arguments\.room: .*; arguments\.guests: /,
    );
  });

  it("a tool spread with changes keeps validating with its Standard Schema", async () => {
    const book = defineTool({
      name: "book",
      description: "Book a room",
      parameters: Booking,
      replay: "unsafe",
      execute: (args) => ({ content: `booked ${args.room}` }),
    });
    const renamed = defineTool({ ...book, name: "reserve" });
    expect(renamed.schema).toBe(Booking);
    expect(renamed.parameters).toEqual(book.parameters);
    const bad = await runToolCall(
      toolsByName([renamed]),
      call("reserve", { room: "", guests: 9, kind: "single", note: null, when: "now" }),
      api(),
    );
    expect(bad.isError).toBe(true);
    expect(bad.content).toMatch(/^error: invalid arguments for "reserve": arguments\.room: /);
    // Parameters replaced: the new ones decide alone, as a JSON Schema or a Standard Schema.
    const count = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };
    const counted = defineTool({ ...book, name: "count", parameters: count as never });
    expect(counted.schema).toBeUndefined();
    expect(await runToolCall(toolsByName([counted]), call("count", { n: 3 }), api())).toMatchObject(
      { isError: false },
    );
    const zodCount = z.object({ n: z.number() });
    const recounted = defineTool({ ...book, name: "recount", parameters: zodCount as never });
    expect(recounted.schema).toBe(zodCount);
    // `schema` alone (not carried by a spread tool) is not a definition field.
    const { spec: _spec, ...noSpec } = book;
    expect(() => defineTool({ ...noSpec, name: "x" } as never)).toThrow(
      /tool "x": schema is not a tool field/,
    );
  });

  it("takes an arktype type (a function carrying ~standard)", async () => {
    const T = arktype({ city: "string", "days?": "number.integer" });
    const trip = defineTool({
      name: "trip",
      description: "",
      parameters: T,
      replay: "safe",
      execute: (args) => ({ content: `${args.city} ${args.days ?? 1}` }),
    });
    expect(trip.parameters).toMatchObject({ type: "object", required: ["city"] });
    const tools = toolsByName([trip]);
    expect((await runToolCall(tools, call("trip", { city: "Oslo" }), api())).content).toBe(
      "Oslo 1",
    );
    const bad = await runToolCall(tools, call("trip", { days: 1.5 }), api());
    expect(bad.content).toMatch(/^error: invalid arguments for "trip": arguments/);
  });

  it("takes valibot through { schema, jsonSchema } or toStandardJsonSchema, and says which when given neither", async () => {
    const V = v.object({ q: v.pipe(v.string(), v.minLength(2)) });
    expect(() =>
      defineTool({
        name: "s",
        description: "",
        parameters: V,
        replay: "safe",
        execute: () => ({ content: "" }),
      }),
    ).toThrow(
      /tool "s": parameters: this valibot schema gives no JSON Schema .* pass \{ schema, jsonSchema \}/,
    );
    const pair = defineTool({
      name: "search",
      description: "",
      parameters: { schema: V, jsonSchema: toJsonSchema(V) },
      replay: "safe",
      execute: (args) => ({ content: `searching ${args.q}` }),
    });
    const wrapped = defineTool({
      name: "search2",
      description: "",
      parameters: toStandardJsonSchema(V),
      replay: "safe",
      execute: (args) => ({ content: `searching ${args.q}` }),
    });
    for (const tool of [pair, wrapped]) {
      expect(tool.spec.parameters).toMatchObject({
        type: "object",
        properties: { q: { type: "string" } },
      });
      const tools = toolsByName([tool]);
      expect((await runToolCall(tools, call(tool.name, { q: "cats" }), api())).content).toBe(
        "searching cats",
      );
      expect((await runToolCall(tools, call(tool.name, { q: "c" }), api())).content).toMatch(
        /^error: invalid arguments for "search2?": arguments\.q: /,
      );
    }
  });

  it("a zod tool runs through the harness: the model is offered its JSON Schema", async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: "add", arguments: { a: 2, b: "3" } }] },
      { text: "ok" },
    ]);
    const add = defineTool({
      name: "add",
      description: "Add",
      parameters: z.object({ a: z.number(), b: z.coerce.number() }),
      replay: "safe",
      execute: ({ a, b }) => ({ content: String(a + b) }),
    });
    const harness = await Harness.open(new MemoryStorage(), { model, tools: [add] });
    try {
      const root = await harness.root();
      await (await root.submit({ type: "input", content: "2+3" })).wait();
      expect(model.requests[0]?.tools[0]?.parameters).toMatchObject({
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
      });
      expect((await root.entries())[2]?.model?.[0]).toMatchObject({ content: "5", isError: false });
    } finally {
      await harness.close();
    }
  });
});
