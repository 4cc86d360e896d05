import {
  APPROVE_QUESTION,
  DEFAULT_APPROVE_DIR,
  DEFAULT_LIVE_DIR,
  type ApproveAgentOptions,
} from "./agent/live-defaults.js";
import type { LiveAgentOptions } from "./agent/live-run.js";
import { QUESTION } from "./agent/script.js";
import { BACKEND_NAMES, isBackendName, type BackendName } from "./backend-names.js";

/** A command line the demo cannot run: printed with the usage hint, exit code 2. */
export class CliError extends Error {
  override readonly name = "CliError";
  readonly code = "CLI_USAGE";
}

export type Command =
  | { kind: "help" }
  | { kind: "tour"; keep: boolean }
  | { kind: "experiment"; backend: BackendName; dir: string | undefined }
  | { kind: "inspect"; path: string }
  | { kind: "faults"; keep: boolean }
  | { kind: "agent"; keep: boolean }
  | { kind: "agent-live"; options: LiveAgentOptions }
  | { kind: "agent-approve"; options: ApproveAgentOptions }
  | { kind: "serve"; path: string | undefined; host: string | undefined; port: number | undefined };

export const USAGE = `Usage: demo [command] [options]

Runs the same Durably work on every storage backend and shows what each stored.

Commands:
  (none), tour [--keep]        the whole tour in a temporary directory: the experiment on
                               every backend, what each stored, the two faults, the agent run
  experiment --backend <name> [--dir <path>]
                               the experiment (a conversation, two saves) on one backend;
                               <name> is one of ${BACKEND_NAMES.join(", ")};
                               --dir is required for every backend except memory and
                               postgres (which needs DURABLY_PG_URL=postgres://… and keeps
                               its rows there, under a new session each run)
  inspect <path>               open an existing Durably storage (a SQLite file or a directory
                               holding durably.sqlite, main.jsonl or a LevelDB) and print its
                               conversations, entries, documents and tasks
  faults [--keep]              only the fault steps, in a temporary directory
  agent [--keep]               only the scripted agent run (SQLite, killed mid-tool, resumed)
  agent --base-url <url> --model <name> [--dir <path>] [--question <text>]
  agent --provider openai --model <name> [--dir <path>] [--question <text>]
                               the same durable agent on a real model, streaming its transcript:
                               --base-url an OpenAI-compatible server (Ollama:
                               http://localhost:11434/v1, vLLM: http://localhost:8000/v1;
                               a key, if it needs one, in DURABLY_AGENT_API_KEY), or
                               --provider openai with OPENAI_API_KEY; kept in --dir (default
                               ./durably-agent): kill it and run the same command to resume
  agent --approve [--dir <path>] [--question <text>] [--base-url <url> --model <name>]
                               a durable agent whose save_note tool asks on the terminal
                               before it runs (scripted model unless --base-url/--provider);
                               kept in --dir (default ./durably-agent-approve): kill it while
                               it asks and run the same command again: the call still waits
  serve [<path>] [--port <n>] [--host <addr>]
                               the live viewer: a local web page that lists the conversations
                               of the storage at <path> (as inspect finds it, or
                               postgres:<session_key> with DURABLY_PG_URL; none: memory) and
                               shows one live; prints the URL (with its access token) to open
  help, --help, -h             this text

Options:
  --keep                       leave the temporary directory in place and print its path

The tour and faults include PostgreSQL only when DURABLY_PG_URL names a server (it must be
reachable then: an error stops the run); without it they say PostgreSQL was skipped.

Output is coloured only on a terminal; set NO_COLOR=1 to turn colour off.
Exit codes: 0 every claim held, 1 a claim failed, 2 bad command line or input.`;

/** Reads `--name value` / `--name=value` options; anything unexpected is an error, never ignored. */
function readOptions(
  args: readonly string[],
  valued: readonly string[],
  flags: readonly string[],
): { values: Map<string, string>; flags: Set<string>; positional: string[] } {
  const values = new Map<string, string>();
  const set = new Set<string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    if (valued.includes(name)) {
      const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
      if (value === undefined || value === "" || (eq === -1 && value.startsWith("--"))) {
        throw new CliError(`option --${name} needs a value`);
      }
      if (values.has(name)) throw new CliError(`option --${name} given twice`);
      values.set(name, value);
    } else if (flags.includes(name) && eq === -1) {
      set.add(name);
    } else {
      throw new CliError(`unknown option ${arg}`);
    }
  }
  return { values, flags: set, positional };
}

function noPositional(command: string, positional: readonly string[]): void {
  if (positional.length > 0) {
    throw new CliError(`${command} takes no argument, got ${JSON.stringify(positional[0])}`);
  }
}

const LIVE_OPTIONS = ["base-url", "model", "provider", "dir", "question"];

/** `agent`: the scripted run, or, with --base-url / --provider, the same agent on a real model. */
function parseAgent(rest: readonly string[]): Command {
  const options = readOptions(rest, LIVE_OPTIONS, ["keep", "approve"]);
  noPositional("agent", options.positional);
  if (options.flags.has("approve")) return parseApprove(options.values, options.flags);
  const live = LIVE_OPTIONS.filter((name) => options.values.has(name));
  if (live.length === 0) return { kind: "agent", keep: options.flags.has("keep") };
  if (options.flags.has("keep"))
    throw new CliError("agent --keep is for the scripted run; a real-model run keeps --dir");
  const provider = options.values.get("provider");
  const baseUrl = options.values.get("base-url");
  if (provider !== undefined && provider !== "openai")
    throw new CliError(
      `unknown --provider ${JSON.stringify(provider)}; use --provider openai, or --base-url for any OpenAI-compatible server`,
    );
  if (provider === undefined && baseUrl === undefined)
    throw new CliError(`agent --${live[0]} needs --base-url <url> or --provider openai`);
  const model = options.values.get("model");
  if (model === undefined) throw new CliError("agent on a real model needs --model <name>");
  return {
    kind: "agent-live",
    options: {
      provider: provider === "openai" ? "openai" : "openai-compatible",
      baseUrl,
      model,
      dir: options.values.get("dir") ?? DEFAULT_LIVE_DIR,
      question: options.values.get("question") ?? QUESTION,
    },
  };
}

/** `agent --approve`: the scripted model, or a real one with the same options as `agent`. */
function parseApprove(values: Map<string, string>, flags: Set<string>): Command {
  if (flags.has("keep")) throw new CliError("agent --approve keeps its run in --dir; drop --keep");
  const dir = values.get("dir") ?? DEFAULT_APPROVE_DIR;
  const question = values.get("question") ?? APPROVE_QUESTION;
  const provider = values.get("provider");
  const baseUrl = values.get("base-url");
  const model = values.get("model");
  if (provider === undefined && baseUrl === undefined && model === undefined)
    return { kind: "agent-approve", options: { dir, question } };
  if (provider !== undefined && provider !== "openai")
    throw new CliError(
      `unknown --provider ${JSON.stringify(provider)}; use --provider openai, or --base-url for any OpenAI-compatible server`,
    );
  if (provider === undefined && baseUrl === undefined)
    throw new CliError("agent --approve --model needs --base-url <url> or --provider openai");
  if (model === undefined) throw new CliError("agent on a real model needs --model <name>");
  return {
    kind: "agent-approve",
    options: {
      dir,
      question,
      live: { provider: provider === "openai" ? "openai" : "openai-compatible", baseUrl, model },
    },
  };
}

export function parseCommand(argv: readonly string[]): Command {
  // `pnpm start -- <command>` may pass the `--` separator through.
  const args = argv[0] === "--" ? argv.slice(1) : argv;
  const [first, ...rest] = args;
  if (first === undefined) return { kind: "tour", keep: false };
  if (first === "help" || first === "--help" || first === "-h") {
    if (rest.length > 0) throw new CliError(`help takes no argument`);
    return { kind: "help" };
  }
  if (first === "--keep") {
    const options = readOptions(rest, [], []);
    noPositional("the tour", options.positional);
    return { kind: "tour", keep: true };
  }
  switch (first) {
    case "agent":
      return parseAgent(rest);
    case "tour":
    case "faults": {
      const options = readOptions(rest, [], ["keep"]);
      noPositional(first, options.positional);
      return { kind: first, keep: options.flags.has("keep") };
    }
    case "experiment": {
      const options = readOptions(rest, ["backend", "dir"], []);
      noPositional("experiment", options.positional);
      const backend = options.values.get("backend");
      if (backend === undefined) {
        throw new CliError(`experiment needs --backend <${BACKEND_NAMES.join("|")}>`);
      }
      if (!isBackendName(backend)) {
        throw new CliError(
          `unknown backend ${JSON.stringify(backend)}; expected one of ${BACKEND_NAMES.join(", ")}`,
        );
      }
      const dir = options.values.get("dir");
      if (backend === "memory" && dir !== undefined) {
        throw new CliError(`the memory backend keeps nothing on disk; drop --dir`);
      }
      if (backend === "postgres" && dir !== undefined) {
        throw new CliError(
          `the postgres backend keeps its rows in the DURABLY_PG_URL database, not on disk; drop --dir`,
        );
      }
      if (backend !== "memory" && backend !== "postgres" && dir === undefined) {
        throw new CliError(`experiment --backend ${backend} needs --dir <path>`);
      }
      return { kind: "experiment", backend, dir };
    }
    case "inspect": {
      const options = readOptions(rest, [], []);
      const [path, extra] = options.positional;
      if (path === undefined) throw new CliError(`inspect needs a <path>`);
      if (extra !== undefined) {
        throw new CliError(`inspect takes one <path>, got also ${JSON.stringify(extra)}`);
      }
      return { kind: "inspect", path };
    }
    case "serve": {
      const options = readOptions(rest, ["port", "host"], []);
      const [path, extra] = options.positional;
      if (extra !== undefined) {
        throw new CliError(`serve takes at most one <path>, got also ${JSON.stringify(extra)}`);
      }
      const portText = options.values.get("port");
      let port: number | undefined;
      if (portText !== undefined) {
        port = Number(portText);
        if (!/^[0-9]+$/.test(portText) || port > 65535) {
          throw new CliError(
            `--port must be a port number from 0 to 65535, got ${JSON.stringify(portText)}`,
          );
        }
      }
      return { kind: "serve", path, host: options.values.get("host"), port };
    }
    default:
      throw new CliError(
        first.startsWith("-")
          ? `unknown option ${first}`
          : `unknown command ${JSON.stringify(first)}; expected experiment, inspect, faults, agent, serve, tour or help`,
      );
  }
}
