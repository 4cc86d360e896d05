export { aiSdkModel, AiSdkModel, type AiSdkModelOptions } from "./ai-sdk-model.js";
export { classifyError, retryAfterMs } from "./errors.js";
export { toPrompt, toTools } from "./prompt.js";
export { SETTING_NAMES } from "./settings.js";
export { parseArguments, StreamTranslator } from "./stream-events.js";
