import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let cached: string | undefined;

/**
 * devmind's version, read from its own package.json (found by walking up from this module, so it
 * works from `src/` under tsx and from `dist/src/` once built or installed). `devmind --version`
 * prints it.
 */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const parsed = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown; version?: unknown };
      if (parsed.name === "devmind" && typeof parsed.version === "string") return (cached = parsed.version);
    } catch {
      // no package.json here: keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) return (cached = "unknown");
    dir = parent;
  }
}
