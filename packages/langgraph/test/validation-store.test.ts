import { storeBackend } from "./support/backends.js";
import { validateOn } from "./support/validation.js";

validateOn(storeBackend);
