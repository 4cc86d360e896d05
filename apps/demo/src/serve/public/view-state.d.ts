// Types of view-state.js, for the tests that run it in Node (the page uses the .js as is).
import type {
  ItemView,
  LiveToolView,
  LiveView,
  UsageTotalsView,
  UsageView,
} from "../view-model.js";

export interface ViewState {
  conversationId: number;
  items: ItemView[];
  live: LiveView | null;
  usage: UsageView | null;
  results: Map<
    string,
    { item: ItemView; message: Extract<ItemView["messages"][number], { role: "toolResult" }> }
  >;
  calls: Set<string>;
  received: number;
}

export type ToolCallStatus =
  | {
      status: "done" | "error";
      resultEntryId: number;
      result: string;
      attempt?: number;
      ending?: string;
    }
  | { status: string; attempt: number; output: string; approval?: LiveToolView["approval"] }
  | { status: "no result" };

export function emptyState(): ViewState;
export function applySnapshot(
  state: ViewState,
  data: { conversationId: number; items?: ItemView[]; live?: LiveView | null; usage?: UsageView },
): ViewState;
export function applyChange(
  state: ViewState,
  data: { items?: ItemView[]; live?: LiveView; usage?: UsageView },
): ViewState;
export function toolCallStatus(state: ViewState, callId: string): ToolCallStatus;
export function resultHasCall(state: ViewState, item: ItemView): boolean;
export function usageLine(totals: UsageTotalsView | null | undefined): string;
