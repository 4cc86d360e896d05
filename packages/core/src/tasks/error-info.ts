import type { ErrorInfo } from "../domain/records.js";

/** The stored form of an error (outcomes keep name, message and a string `code` when present). */
export function errorInfo(error: unknown): ErrorInfo {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return {
      name: error.name,
      message: error.message,
      ...(typeof code === "string" ? { code } : {}),
    };
  }
  return { name: "Error", message: typeof error === "string" ? error : String(error) };
}

/** `error` itself when it is an `Error`, else an `Error` saying what was thrown. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
