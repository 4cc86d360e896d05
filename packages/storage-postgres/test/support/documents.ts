import type { DocumentId, Storage, StorageWrite } from "@durably/core";

/** Stores a session document `id` with base `{ n: 1 }`, as a test's starting point. */
export async function createNote(storage: Storage, id: DocumentId): Promise<void> {
  const create = {
    type: "document.create",
    record: { id, kind: "note", scope: { kind: "session" } },
    content: { kind: "base", version: 1, value: { n: 1 } },
  } as unknown as StorageWrite;
  await storage.commit([[create]], () => undefined);
}
