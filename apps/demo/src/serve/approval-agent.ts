import { appendFile } from "node:fs/promises";
import { resolve } from "node:path";
import { defineTool, ScriptedModel, type Model, type Tool } from "@durably/core";

/**
 * The viewer's second scripted run: an agent whose `save_note` tool asks a
 * person first (`approval: "always"`), so the page has a call to approve or
 * deny. The same tool as `demo agent --approve`: it appends a line to a
 * notes file, a real effect, never rerun after a crash (replay "unsafe").
 */
export const APPROVAL_QUESTION = "What is 2 + 3? Save the answer as a note.";
/** The harness model name the approval run's input names. */
export const APPROVAL_MODEL = "scripted-approval";
export const APPROVAL_TOOL = "save_note";
export const APPROVAL_NOTE = "2 + 3 = 5";
export const APPROVAL_ANSWER =
  "Done: the save_note result above says whether the note was saved (approved) or not (denied, with your reason).";
/** Where `save_note` writes when `demo serve` is given no `--notes`: the current directory. */
export const DEFAULT_NOTES_FILE = "durably-viewer-notes.txt";

export function approvalModel(chunkDelayMs: number): Model {
  return new ScriptedModel(
    [
      {
        text: `2 + 3 = 5. I will save that as a note; the ${APPROVAL_TOOL} tool asks you first. `,
        toolCalls: [{ name: APPROVAL_TOOL, arguments: { text: APPROVAL_NOTE } }],
      },
      { text: APPROVAL_ANSWER },
    ],
    { chunkDelayMs },
  );
}

/** `save_note`: appends one line to `notesFile`, once a person approved the call. */
export function saveNoteTool(notesFile: string): Tool {
  const file = resolve(notesFile);
  return defineTool<{ text: string }>({
    name: APPROVAL_TOOL,
    description: "Save a short note (one line) to the viewer's notes file",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    replay: "unsafe",
    approval: "always",
    execute: async ({ text }) => {
      await appendFile(file, `${text.replace(/\n/g, " ")}\n`);
      return { content: `saved to ${file}` };
    },
  });
}
