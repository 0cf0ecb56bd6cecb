/**
 * Sets the V8 flags of this CLI invocation (see `v8FlagsFor`) when imported. The CLI's entry
 * imports it first, so the flags hold before any module compiles PGlite's WebAssembly.
 */
import { setFlagsFromString } from "node:v8";
import { v8FlagsFor } from "./v8-flags.js";

for (const flag of v8FlagsFor(process.argv.slice(2))) setFlagsFromString(flag);
