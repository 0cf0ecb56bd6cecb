/**
 * Every relative link of the user docs resolves: README.md, docs/*.md, bench/README.md and the
 * examples' READMEs link to files that exist, and a `#fragment` names a heading of the target (as
 * GitHub makes its anchors).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = resolve(fileURLToPath(new URL("../../", import.meta.url)));

/**
 * Docs written on other branches at the same time, linked before they land: a link to one of these
 * is checked once the file exists (once merged, this list changes nothing).
 */
const WRITTEN_ELSEWHERE = new Set([
  "docs/protocol.md",
  "docs/dev-loop.md",
  "docs/edges.md",
  "docs/durability.md",
  "docs/operations.md",
  "examples/react-chat/README.md",
]);

function docFiles(): string[] {
  const examples = readdirSync(join(ROOT, "examples"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(ROOT, "examples", entry.name, "README.md")))
    .map((entry) => `examples/${entry.name}/README.md`);
  const docs = readdirSync(join(ROOT, "docs")).filter((file) => file.endsWith(".md")).map((file) => `docs/${file}`);
  return ["README.md", ...docs, "bench/README.md", ...examples];
}

/** Markdown without its fenced blocks and inline code, where `[x](y)` is not a link. */
function prose(markdown: string): string {
  return markdown.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a markdown file's headings (repeats numbered `-1`, `-2`, … as GitHub does). */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of markdown.replace(/```[\s\S]*?```/g, "").matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = anchorOf(match[1] as string);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The relative links of a doc: `[text](target)`, without URLs with a scheme. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] as string)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe("links between the docs", () => {
  it("every relative link resolves to a file, and every #fragment to a heading of it", () => {
    const problems: string[] = [];
    let checked = 0;
    for (const file of docFiles()) {
      const text = readFileSync(join(ROOT, file), "utf8");
      for (const target of relativeLinks(text)) {
        const [path = "", fragment] = target.split("#", 2);
        const absolute = path === "" ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), path);
        const name = relative(ROOT, absolute);
        if (!existsSync(absolute)) {
          if (!WRITTEN_ELSEWHERE.has(name)) problems.push(`${file}: ${target}: no file ${name}`);
          continue;
        }
        checked += 1;
        if (fragment === undefined) continue;
        if (statSync(absolute).isDirectory() || !absolute.endsWith(".md")) {
          problems.push(`${file}: ${target}: a #fragment on a file that is not markdown`);
        } else if (!anchorsOf(readFileSync(absolute, "utf8")).has(fragment)) {
          problems.push(`${file}: ${target}: ${name} has no heading #${fragment}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it("anchors are made as GitHub makes them", () => {
    expect(anchorOf("When the database restarts, stalls or fills up")).toBe("when-the-database-restarts-stalls-or-fills-up");
    expect(anchorOf("devmind's routes")).toBe("devminds-routes");
    expect(anchorOf("`--json`")).toBe("--json");
    expect(anchorOf("Tests of a checkout")).toBe("tests-of-a-checkout");
  });
});
