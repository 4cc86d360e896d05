import { afterEach, describe, expect, it } from "vitest";
import { tourBackends } from "../src/backends.ts";
import { PG_SKIPPED, PG_URL_VAR, redactPgUrl } from "../src/postgres-config.ts";
import { streamOutput } from "../src/render/output.ts";
import { experimentStep } from "../src/tour/experiment-step.ts";
import { runSteps } from "../src/tour/tour.ts";
import { runDemo } from "./run-demo.ts";

/** The server the suite may use (a reachable PostgreSQL), or none: then the PostgreSQL runs are skipped. */
const PG_URL = process.env[PG_URL_VAR];

describe("the PostgreSQL backend", () => {
  it.runIf(PG_URL)(
    "runs the experiment on the DURABLY_PG_URL server and every claim holds",
    async () => {
      const { code, stdout, stderr } = await runDemo(["experiment", "--backend", "postgres"]);
      expect(stderr).toBe("");
      expect(code).toBe(0);
      expect(stdout).toContain("The experiment on PostgreSQL");
      expect(stdout).toMatch(
        /PostgreSQL: postgres(ql)?:\/\/.*, schema durably, session_key "demo:/,
      );
      expect(stdout).toContain("FROM durably.entries WHERE session_key = $1");
      expect(stdout).toContain(
        "✓ PostgreSQL: the entries rows are the entries the port returned, each with its save's commit_seq",
      );
      expect(stdout).toContain(
        "✓ PostgreSQL: the notes document has one base (first save) and one delta (second save)",
      );
      expect(stdout).toContain("✓ PostgreSQL read back the same after close and reopen");
      expect(stdout).not.toContain("✗");
      const password = new URL(PG_URL ?? "").password;
      if (password !== "") expect(stdout).not.toContain(password);
    },
  );

  it("without DURABLY_PG_URL, experiment --backend postgres is a usage error naming the variable", async () => {
    const { code, stdout, stderr } = await runDemo(["experiment", "--backend", "postgres"], {
      [PG_URL_VAR]: undefined,
    });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain("experiment --backend postgres needs DURABLY_PG_URL");
  });

  it("with DURABLY_PG_URL set but no server there, fails loudly and never prints the password", async () => {
    const { code, stderr } = await runDemo(["experiment", "--backend", "postgres"], {
      [PG_URL_VAR]: "postgres://demo:s3cret-pw@127.0.0.1:1/nothing",
    });
    expect(code).toBe(1);
    // The storage's typed error, naming the server (without the password) and what failed.
    expect(stderr).toContain(
      "PostgresUnavailable: cannot use the PostgreSQL server postgres://demo@127.0.0.1:1/nothing (from DURABLY_PG_URL): StorageIOError: PostgreSQL 127.0.0.1:1/nothing: opening session",
    );
    expect(stderr).toContain("failed: connect ECONNREFUSED 127.0.0.1:1");
    expect(stderr).not.toContain("s3cret-pw");
  });

  it("strips the password from the connection string it prints", () => {
    expect(redactPgUrl("postgres://u:pw@h:5432/db?sslmode=require")).toBe(
      "postgres://u@h:5432/db?sslmode=require",
    );
    expect(redactPgUrl("postgresql://h/db?password=pw")).toBe("postgresql://h/db");
    expect(redactPgUrl("u:pw@h")).not.toContain("pw");
  });
});

describe("the tour without DURABLY_PG_URL", () => {
  const saved = process.env[PG_URL_VAR];
  afterEach(() => {
    if (saved === undefined) delete process.env[PG_URL_VAR];
    else process.env[PG_URL_VAR] = saved;
  });

  it("reads the variable when it runs, and says PostgreSQL was skipped", async () => {
    delete process.env[PG_URL_VAR];
    expect(tourBackends().map((b) => b.name)).toEqual(["memory", "sqlite", "jsonl", "store"]);
    const chunks: string[] = [];
    const out = streamOutput({ write: (chunk: string) => chunks.push(chunk) }, {});
    expect(await runSteps(out, [experimentStep], { keep: false })).toBe(0);
    const text = chunks.join("");
    expect(text).toContain(PG_SKIPPED);
    expect(text).toContain(
      "PostgreSQL: skipped (set DURABLY_PG_URL=postgres://… to a reachable server to include it)",
    );
    expect(text).toContain("✓ all 4 backends return identical results");

    process.env[PG_URL_VAR] = "postgres://u@h/db";
    expect(tourBackends().map((b) => b.name)).toEqual([
      "memory",
      "sqlite",
      "jsonl",
      "store",
      "postgres",
    ]);
  });
});
