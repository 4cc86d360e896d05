import {
  commitOne,
  conversation,
  createDoc,
  entry,
  mintIds,
  ROOT,
  scenario,
  show,
  submission,
  task,
  type RuleGroup,
} from "./support.js";

export const ids: RuleGroup = {
  rule: "ids",
  scenarios: [
    scenario(
      "mintId returns positive safe integers and never the root id 1",
      async ({ storage, check }) => {
        const minted = await mintIds(storage, 50);
        const bad = minted.filter((id) => !Number.isSafeInteger(id) || id <= 1);
        check.equal(
          bad,
          [],
          `minted ids that are not safe integers > 1 (minted ${show(minted.slice(0, 5))}...)`,
        );
      },
    ),
    scenario(
      "mintId never returns the same id twice, also when called concurrently",
      async ({ storage, check }) => {
        const sequential = await mintIds(storage, 100);
        const concurrent = await Promise.all(Array.from({ length: 100 }, () => storage.mintId()));
        const all = [...sequential, ...concurrent];
        const dupes = all.filter((id, i) => all.indexOf(id) !== i);
        check.equal(dupes, [], "ids minted twice by one instance");
      },
    ),
    scenario(
      "mintId never returns an id used by a committed record, even one written without minting",
      async ({ storage, check }) => {
        const used = [500, 501, 502, 503, 504];
        await commitOne(check, storage, [
          conversation(ROOT),
          conversation(used[0]!),
          entry(used[1]!, ROOT),
          task(used[2]!, ROOT),
          submission(used[3]!, ROOT),
          createDoc(used[4]!, { n: 1 }),
        ]);
        const minted = await mintIds(storage, 600);
        const reused = minted.filter((id) => used.includes(id) || id === ROOT);
        check.equal(reused, [], `minted ids colliding with committed ids ${show(used)}`);
      },
    ),
  ],
};
