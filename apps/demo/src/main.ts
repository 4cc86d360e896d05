#!/usr/bin/env node
import { approveAgentRun } from "./agent/approve-run.js";
import { liveAgentRun } from "./agent/live-run.js";
import { CliError, parseCommand, USAGE } from "./cli.js";
import { experimentCommand, inspectCommand } from "./commands.js";
import { streamOutput } from "./render/output.js";
import { serveCommand } from "./serve/serve-command.js";
import { AGENT, FAULTS, runSteps, TOUR } from "./tour/tour.js";

async function main(argv: readonly string[]): Promise<number> {
  const out = streamOutput();
  const command = parseCommand(argv);
  switch (command.kind) {
    case "help":
      out.line(USAGE);
      return 0;
    case "tour":
      return runSteps(out, TOUR, { keep: command.keep });
    case "faults":
      return runSteps(out, FAULTS, { keep: command.keep });
    case "agent":
      return runSteps(out, AGENT, { keep: command.keep });
    case "agent-live":
      return liveAgentRun(out, (text) => process.stdout.write(text), command.options);
    case "agent-approve":
      return approveAgentRun(out, (text) => process.stdout.write(text), command.options);
    case "experiment":
      return experimentCommand(out, command.backend, command.dir);
    case "inspect":
      return inspectCommand(out, command.path);
    case "serve":
      return serveCommand(out, command);
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return `${error.name}${typeof code === "string" ? ` (${code})` : ""}: ${error.message}`;
  }
  return String(error);
}

// `demo | head`: the reader went away. Keep running without output (so the
// tour still cleans up its directory and sets its exit code) instead of
// crashing on EPIPE.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") throw error;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof CliError) {
      process.stderr.write(`demo: ${error.message}\nRun "demo --help" for the commands.\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`demo: ${describe(error)}\n`);
    if (error instanceof Error && error.stack !== undefined && process.env["DURABLY_DEBUG"]) {
      process.stderr.write(error.stack + "\n");
    }
    process.exitCode = 1;
  },
);
