export function streamingPartial(answer: string): string | false;
export function focusedElement(): { name: string; outline: string };
export function lowContrastText(): string[];
export function streamingReasoning(reasoning: string): string | false;
