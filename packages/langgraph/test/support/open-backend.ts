import type { Storage } from "@durably/core";
import {
  jsonlBackend,
  postgresBackend,
  sqliteBackend,
  storeBackend,
  type Backend,
} from "./backends.js";

/** The persistent backends by name (crash children get the name and place from the parent). */
export function persistentBackend(name: string): Backend {
  switch (name) {
    case "sqlite":
      return sqliteBackend;
    case "jsonl":
      return jsonlBackend;
    case "store":
      return storeBackend;
    case "postgres": {
      const url = process.env.DURABLY_PG_URL;
      if (!url) throw new Error("postgres backend: DURABLY_PG_URL is not set");
      return postgresBackend(url);
    }
    default:
      throw new Error(`unknown backend ${name}`);
  }
}

export function openBackend(name: string, place: string): Promise<Storage> {
  return persistentBackend(name).open(place);
}
