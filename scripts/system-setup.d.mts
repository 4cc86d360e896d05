import type { ToolName } from "./system-tools.mjs";

export interface CommandResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** The machine as the probes and the installer see it. */
export interface System {
  env: Record<string, string | undefined>;
  uid: number | undefined;
  which(command: string): string | undefined;
  isExecutable(file: string): boolean;
  listDir(dir: string): string[];
  run(
    command: string,
    args: readonly string[],
    options?: { env?: Record<string, string>; inherit?: boolean; timeoutMs?: number },
  ): CommandResult;
}

export interface PreparedTool {
  name: ToolName;
  available: boolean;
  path?: string;
  detail?: string;
  installed?: string[];
  reason?: string;
  enable?: string;
  neededBy?: string[];
}

export function prepareSystem(options?: {
  system?: System;
  install?: boolean;
  pretendMissing?: readonly string[];
  log?: (line: string) => void;
}): PreparedTool[];

export function describeStatuses(statuses: readonly PreparedTool[]): string;

export function setupOptions(
  argv: readonly string[],
  env?: Record<string, string | undefined>,
): { install: boolean; pretendMissing: string[] };
