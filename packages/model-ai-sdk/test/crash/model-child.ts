import { httpModels, SERVER_URL_ENV } from "../support/http-models.js";

/** The crash child's models: the same HTTP path as the parent's, to the parent's server. */
export const createModel = httpModels(() => {
  const url = process.env[SERVER_URL_ENV];
  if (!url) throw new Error(`${SERVER_URL_ENV} is not set in the crash child`);
  return url;
});
