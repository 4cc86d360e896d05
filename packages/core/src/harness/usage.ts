import type { ConversationId } from "../domain/ids.js";
import type { Draft } from "../session/draft.js";
import { defineDoc } from "../session/tokens.js";
import type { Transaction } from "../session/transaction.js";
import type { ModelPrices, ModelUsage } from "./model.js";

/** Counters of model calls: how many, and the tokens they reported. */
export type UsageTotals = {
  /** Model calls that reported usage (answers and compaction summaries). */
  requests: number;
  inputTokens: number;
  outputTokens: number;
  /** Input tokens read from the provider's prompt cache (part of `inputTokens`). */
  cachedInputTokens: number;
  /** Output tokens spent on reasoning (part of `outputTokens`). */
  reasoningTokens: number;
  /** What the priced calls cost, in the unit of the prices; present once one call was priced. */
  cost?: number;
  /** Calls counted here whose model declared no prices (not in `cost`); present when above 0. */
  unpriced?: number;
};

/** Totals overall and per model name. */
export type UsageReport = { total: UsageTotals; models: { [model: string]: UsageTotals } };

/** `durably.usage`: the session's totals, per model, and per conversation (each with its models). */
export type UsageState = UsageReport & { conversations: { [conversationId: string]: UsageReport } };

export const emptyTotals = (): UsageTotals => ({
  requests: 0,
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  reasoningTokens: 0,
});

export const emptyReport = (): UsageReport => ({ total: emptyTotals(), models: {} });

/**
 * `durably.usage`: one session document, updated in the commit that stores
 * each assistant entry (and each compaction summary) with the call's usage.
 */
export const UsageDoc = defineDoc<UsageState, "session">({
  kind: "durably.usage",
  version: 1,
  scope: "session",
  initial: () => ({ ...emptyReport(), conversations: {} }),
  // Each call adds a few small sets; a base now and then keeps reads short.
  checkpointWhen: (_value, _ops, { deltasSinceBase }) => deltasSinceBase >= 256,
});

/** What one call cost, or `undefined` without prices. Cached input is priced apart when declared. */
export function costOf(usage: ModelUsage, prices: ModelPrices | undefined): number | undefined {
  if (!prices) return undefined;
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const fresh = usage.inputTokens - cached;
  const cachedPrice = prices.cachedInputPerMillion ?? prices.inputPerMillion;
  return (
    (fresh * prices.inputPerMillion +
      cached * cachedPrice +
      usage.outputTokens * prices.outputPerMillion) /
    1_000_000
  );
}

function add(totals: Draft<UsageTotals>, usage: ModelUsage, cost: number | undefined): void {
  totals.requests += 1;
  totals.inputTokens += usage.inputTokens;
  totals.outputTokens += usage.outputTokens;
  totals.cachedInputTokens += usage.cachedInputTokens ?? 0;
  totals.reasoningTokens += usage.reasoningTokens ?? 0;
  if (cost !== undefined) totals.cost = (totals.cost ?? 0) + cost;
  else totals.unpriced = (totals.unpriced ?? 0) + 1;
}

/**
 * Adds one model call to the ledger, inside the caller's commit (the one
 * that stores the entry carrying the usage): the session's total, its
 * model's, the conversation's and the conversation's model's.
 */
export async function recordUsage(
  tx: Transaction,
  conversationId: ConversationId,
  model: string,
  usage: ModelUsage,
  cost: number | undefined,
): Promise<void> {
  const ledger = await tx.doc(UsageDoc, null);
  const key = String(conversationId);
  // Assigned first, then read back: the read returns the tracked draft, the assigned value is a copy.
  if (!ledger.conversations[key]) ledger.conversations[key] = emptyReport();
  const conversation = ledger.conversations[key];
  if (!ledger.models[model]) ledger.models[model] = emptyTotals();
  if (!conversation.models[model]) conversation.models[model] = emptyTotals();
  add(ledger.total, usage, cost);
  add(ledger.models[model], usage, cost);
  add(conversation.total, usage, cost);
  add(conversation.models[model], usage, cost);
}

/** The report for one conversation (zeros when it made no call), or for the whole session. */
export function usageReport(
  state: UsageState | undefined,
  conversationId?: ConversationId,
): UsageReport {
  if (!state) return emptyReport();
  if (conversationId === undefined) return { total: state.total, models: state.models };
  return state.conversations[String(conversationId)] ?? emptyReport();
}
