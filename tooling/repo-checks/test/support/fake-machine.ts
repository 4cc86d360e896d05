import type { CommandResult, System } from "../../../../scripts/system-setup.mjs";

/** What each Debian package puts on the machine. */
const PROVIDES: Record<string, string[]> = {
  chromium: ["/usr/bin/chromium"],
  postgresql: ["/usr/lib/postgresql/15/bin/initdb"],
  strace: ["/usr/bin/strace"],
  "build-essential": ["/usr/bin/make", "/usr/bin/g++"],
  python3: ["/usr/bin/python3"],
};

export interface FakeMachineOptions {
  uid?: number;
  installed?: string[];
  apt?: boolean;
  /** Packages apt cannot find. */
  unknownPackages?: string[];
  /** strace is installed but may not trace (a container without ptrace). */
  ptrace?: boolean;
  env?: Record<string, string>;
}

/**
 * A Debian machine in memory: executables by path, apt-get that installs
 * the packages above (or cannot find some), and a record of every command.
 */
export class FakeMachine implements System {
  readonly calls: string[] = [];
  readonly files = new Set<string>();
  readonly uid: number | undefined;
  readonly env: Record<string, string | undefined>;
  private readonly options: FakeMachineOptions;

  constructor(options: FakeMachineOptions = {}) {
    this.options = options;
    this.uid = options.uid ?? 0;
    this.env = { PATH: "/usr/bin", ...options.env };
    for (const name of options.installed ?? []) this.add(name);
    if (options.apt !== false) this.files.add("/usr/bin/apt-get");
  }

  private add(pkg: string): void {
    for (const file of PROVIDES[pkg] ?? []) this.files.add(file);
  }

  which(command: string): string | undefined {
    const file = `/usr/bin/${command}`;
    return this.files.has(file) ? file : undefined;
  }

  isExecutable(file: string): boolean {
    return this.files.has(file);
  }

  listDir(dir: string): string[] {
    const prefix = `${dir}/`;
    return [
      ...new Set(
        [...this.files]
          .filter((f) => f.startsWith(prefix))
          .map((f) => f.slice(prefix.length).split("/")[0] as string),
      ),
    ];
  }

  run(command: string, args: readonly string[]): CommandResult {
    this.calls.push([command, ...args].join(" "));
    const ok = { status: 0, stdout: "", stderr: "" };
    if (command === "apt-get" && args[0] === "update") return ok;
    if (command === "apt-get" && args[0] === "install") {
      const packages = args.filter((a) => !a.startsWith("-") && a !== "install");
      const unknown = packages.find((p) => this.options.unknownPackages?.includes(p));
      if (unknown !== undefined)
        return { status: 100, stdout: "", stderr: `E: Unable to locate package ${unknown}\n` };
      for (const pkg of packages) this.add(pkg);
      return ok;
    }
    if (command === "id")
      return this.files.has("/usr/lib/postgresql/15/bin/initdb")
        ? ok
        : { status: 1, stdout: "", stderr: "no such user" };
    if (command === "/usr/bin/strace")
      return this.options.ptrace === false
        ? {
            status: 1,
            stdout: "",
            stderr: "strace: ptrace(PTRACE_TRACEME, ...): Operation not permitted\n",
          }
        : ok;
    return { status: 127, stdout: "", stderr: `${command}: not found` };
  }
}
