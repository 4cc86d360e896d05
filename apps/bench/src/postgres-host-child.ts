/**
 * One app-server process of the multi-process host case:
 * `node postgres-host-child.js <url> <sessions> <writers per session>`.
 * Opens its host and prints `{"ready":true}`; then for each stdin line
 * `run <ms>` commits with every writer for that long and prints
 * `{"commits":n}`; on `close` closes the host, prints `{"closed":true}`
 * and exits.
 */
import { createInterface } from "node:readline";
import { openHostLoad } from "./postgres-host-load.js";

const [url, sessions, perSession] = process.argv.slice(2);
if (url === undefined || !(Number(sessions) > 0) || !(Number(perSession) > 0))
  throw new TypeError(
    `usage: postgres-host-child <url> <sessions> <writers per session>, got ${process.argv.slice(2).join(" ")}`,
  );
const load = await openHostLoad(url, Number(sessions), Number(perSession));
const say = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);
say({ ready: true });
for await (const line of createInterface({ input: process.stdin })) {
  const [command, arg] = line.split(" ");
  if (command === "run") say({ commits: await load.run(performance.now() + Number(arg)) });
  else if (command === "close") {
    await load.close();
    say({ closed: true });
    process.exit(0);
  } else throw new Error(`postgres-host-child: unknown command ${JSON.stringify(line)}`);
}
