import type { ConversationId, DocumentId, EntryId, SubmissionId, TaskId } from "@durably/core";
import { conversation, scenario, show, withRoot, type RuleGroup } from "./support.js";

export const closing: RuleGroup = {
  rule: "closing",
  scenarios: [
    scenario("close is idempotent", async ({ storage, check }) => {
      await withRoot(check, storage);
      await check.resolves(storage.close(), "first close");
      await check.resolves(storage.close(), "second close");
    }),
    scenario("every call after close rejects with StorageClosed", async ({ storage, check }) => {
      await withRoot(check, storage);
      await storage.close();
      const scope = { kind: "session" } as const;
      const calls: [string, () => Promise<unknown>][] = [
        ["commit", () => storage.commit([[conversation(7)]], () => undefined)],
        ["mintId", () => storage.mintId()],
        ["conversation", () => storage.conversation(1 as ConversationId)],
        ["scanConversations", () => storage.scanConversations({}, 10)],
        ["entry", () => storage.entry(2 as EntryId)],
        ["latestHead", () => storage.latestHead(1 as ConversationId)],
        ["scanEntries", () => storage.scanEntries({ conversationId: 1 as ConversationId }, 10)],
        ["task", () => storage.task(2 as TaskId)],
        ["scanTasks", () => storage.scanTasks({}, 10)],
        ["submission", () => storage.submission(2 as SubmissionId)],
        [
          "scanSubmissions",
          () => storage.scanSubmissions({ conversationId: 1 as ConversationId }, 10),
        ],
        ["submissionByRequest", () => storage.submissionByRequest(1 as ConversationId, "r")],
        ["findDocument", () => storage.findDocument({ kind: "k", scope }, "current")],
        ["document", () => storage.document(2 as DocumentId, "current")],
        ["scanDocuments", () => storage.scanDocuments({ scope, at: "current" }, 10)],
      ];
      for (const [name, call] of calls) {
        let promise: Promise<unknown> | undefined;
        let thrown: unknown;
        try {
          promise = call();
        } catch (error) {
          thrown = error;
        }
        if (promise === undefined)
          return check.fail(
            `${name} after close threw synchronously (${show(thrown)}); it must return a rejected promise`,
          );
        await check.rejects(promise, { name: "StorageClosed" }, `${name} after close`);
      }
    }),
    scenario(
      "capabilities, when declared, say with a boolean whether data persists",
      ({ storage, check, canReopen }) => {
        const capabilities: unknown = storage.capabilities;
        check.ok(
          capabilities === undefined ||
            (typeof capabilities === "object" &&
              capabilities !== null &&
              ["undefined", "boolean"].includes(
                typeof (capabilities as { persistent?: unknown }).persistent,
              )),
          `capabilities must be undefined or { persistent?: boolean }, got ${show(capabilities)}`,
        );
        if (storage.capabilities?.persistent === true)
          check.ok(
            canReopen,
            "a storage declaring persistent: true needs a factory that passes reopen() to use()",
          );
        return Promise.resolve();
      },
    ),
  ],
};
