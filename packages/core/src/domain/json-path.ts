export type PathSegment = string | number;
export type JsonPath = readonly PathSegment[];

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Renders `["items", 3, "a b"]` under `root` as `root.items[3]["a b"]`. */
export function formatPath(root: string, path: JsonPath): string {
  let out = root;
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}
