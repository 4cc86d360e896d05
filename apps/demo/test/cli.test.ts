import { describe, expect, it } from "vitest";
import { parseCommand } from "../src/cli.ts";

describe("parseCommand", () => {
  it("runs the tour with no arguments", () => {
    expect(parseCommand([])).toEqual({ kind: "tour", keep: false });
    expect(parseCommand(["--"])).toEqual({ kind: "tour", keep: false });
    expect(parseCommand(["tour", "--keep"])).toEqual({ kind: "tour", keep: true });
  });

  it("reads experiment options in both spellings", () => {
    expect(parseCommand(["experiment", "--backend", "sqlite", "--dir", "/tmp/x"])).toEqual({
      kind: "experiment",
      backend: "sqlite",
      dir: "/tmp/x",
    });
    expect(parseCommand(["--", "experiment", "--backend=memory"])).toEqual({
      kind: "experiment",
      backend: "memory",
      dir: undefined,
    });
    expect(parseCommand(["experiment", "--backend", "postgres"])).toEqual({
      kind: "experiment",
      backend: "postgres",
      dir: undefined,
    });
  });

  it("rejects unknown commands, backends and options with a clear message", () => {
    expect(() => parseCommand(["expriment"])).toThrow(/unknown command "expriment"/);
    expect(() => parseCommand(["experiment", "--backend", "redis", "--dir", "d"])).toThrow(
      /unknown backend "redis"; expected one of memory, sqlite, jsonl, store, postgres/,
    );
    expect(() => parseCommand(["experiment", "--backend", "postgres", "--dir", "d"])).toThrow(
      /postgres backend keeps its rows in the DURABLY_PG_URL database, not on disk; drop --dir/,
    );
    expect(() => parseCommand(["faults", "--fast"])).toThrow(/unknown option --fast/);
    expect(() => parseCommand(["experiment", "--backend", "jsonl"])).toThrow(/needs --dir/);
    expect(() => parseCommand(["experiment", "--backend"])).toThrow(/--backend needs a value/);
    expect(() => parseCommand(["inspect"])).toThrow(/inspect needs a <path>/);
    expect(() => parseCommand(["inspect", "a", "b"])).toThrow(/one <path>/);
  });
});
