import { sqliteBackend } from "./support/backends.js";
import { validateOn } from "./support/validation.js";

validateOn(sqliteBackend);
