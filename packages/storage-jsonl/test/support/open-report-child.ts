// Opens the JSONL storage in argv[2] and prints how the open ended, as one JSON line:
// the error's name, location and the code of its cause (or "opened").
import { openJsonlStorage } from "../../src/index.js";

const dir = process.argv[2] as string;
try {
  const storage = await openJsonlStorage(dir);
  await storage.close();
  console.log(JSON.stringify({ name: "opened" }));
} catch (error) {
  const e = error as { name?: string; location?: unknown; cause?: { code?: string } };
  console.log(JSON.stringify({ name: e.name, location: e.location, cause: e.cause?.code }));
}
