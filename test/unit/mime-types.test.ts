import { describe, expect, it } from "vitest";
import { DEFAULT_MIME_TYPE, mimeTypeFor } from "../../src/tools/mime-types.js";

describe("mimeTypeFor", () => {
  it("maps known extensions, case-insensitively, and falls back to octet-stream", () => {
    expect(["a.png", "B.JPG", "c.jpeg", "report.csv", "notes.md", "data.json", "x.tar.gz", "page.html", "doc.pdf"].map(mimeTypeFor)).toEqual([
      "image/png",
      "image/jpeg",
      "image/jpeg",
      "text/csv; charset=utf-8",
      "text/markdown; charset=utf-8",
      "application/json",
      "application/gzip",
      "text/html; charset=utf-8",
      "application/pdf",
    ]);
    for (const name of ["noext", "weird.xyz123", ".hidden", "trailing.", "archive.7z"]) expect(mimeTypeFor(name)).toBe(DEFAULT_MIME_TYPE);
    expect(DEFAULT_MIME_TYPE).toBe("application/octet-stream");
  });
});
