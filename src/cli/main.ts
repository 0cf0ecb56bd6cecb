#!/usr/bin/env node
/**
 * The `devmind` bin. It only picks how the command line starts (cli-entry.ts: the one-file
 * bundle, or devmind's own modules bundled when project graphs can load) and imports it; the command
 * line itself is ./cli-program.ts.
 */
// first: V8 flags must be set before any module compiles PGlite's WebAssembly
import "./apply-v8-flags.js";
import { existsSync } from "node:fs";
import { CLI_BUNDLE } from "../constants.js";
import { cliEntryModule } from "./cli-entry.js";

const bundleExists = existsSync(new URL(`./${CLI_BUNDLE.file}`, import.meta.url));
const graphsBundleExists = existsSync(new URL(`./${CLI_BUNDLE.graphsFile}`, import.meta.url));
await import(cliEntryModule({ args: process.argv.slice(2), cwd: process.cwd(), bundleExists, graphsBundleExists }));
