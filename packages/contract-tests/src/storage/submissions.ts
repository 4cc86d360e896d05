import type { ConversationId } from "@durably/core";
import {
  commitOne,
  conversation,
  mintIds,
  ROOT,
  scenario,
  submission,
  withRoot,
  type RuleGroup,
} from "./support.js";

export const submissions: RuleGroup = {
  rule: "submissions",
  scenarios: [
    scenario(
      "submissionByRequest returns the conversation's submission with that requestId, the lowest id if several",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [c, a, b, x] = await mintIds(storage, 4);
        await commitOne(check, storage, [
          conversation(c!),
          submission(b!, ROOT, { requestId: "r1" }),
          submission(a!, ROOT, { requestId: "r1" }),
          submission(x!, c!, { requestId: "r2" }),
        ]);
        check.equal(
          (await storage.submissionByRequest(ROOT, "r1"))?.id,
          a,
          `request r1 in ${ROOT} (submissions ${a} and ${b})`,
        );
        check.equal(
          (await storage.submissionByRequest(c as ConversationId, "r2"))?.id,
          x,
          `request r2 in ${c}`,
        );
      },
    ),
    scenario(
      "submissionByRequest is undefined for another conversation or an unknown requestId",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [c, a] = await mintIds(storage, 2);
        await commitOne(check, storage, [
          conversation(c!),
          submission(a!, ROOT, { requestId: "r1" }),
        ]);
        check.equal(
          await storage.submissionByRequest(c as ConversationId, "r1"),
          undefined,
          `request r1 asked of conversation ${c}`,
        );
        check.equal(await storage.submissionByRequest(ROOT, "r9"), undefined, "unknown request r9");
      },
    ),
    scenario(
      "a submission replaced with another requestId is found by the new requestId only",
      async ({ storage, check }) => {
        await withRoot(check, storage);
        const [a] = await mintIds(storage, 1);
        await commitOne(check, storage, [submission(a!, ROOT, { requestId: "old" })]);
        await commitOne(check, storage, [
          submission(a!, ROOT, { requestId: "new", status: "placed" }),
        ]);
        check.equal(
          {
            old: await storage.submissionByRequest(ROOT, "old"),
            new: (await storage.submissionByRequest(ROOT, "new"))?.status,
          },
          { old: undefined, new: "placed" },
          `submission ${a} moved from request "old" to "new"`,
        );
      },
    ),
  ],
};
