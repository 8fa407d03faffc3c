import { describe, expect, it } from "vitest";
import { ArchiveEntryChecker, type ArchiveEntry } from "../src/archive-safety.js";

const limits = { maxExtractedBytes: 1000, maxEntries: 10 };

function check(entries: ArchiveEntry[], checkerLimits = limits): void {
  const checker = new ArchiveEntryChecker("https://example.com/a.tar.gz", checkerLimits);
  for (const entry of entries) checker.check(entry);
  checker.finish();
}

const file = (name: string, size = 1): ArchiveEntry => ({ name, kind: "file", size });
const symlink = (name: string, linkTarget: string): ArchiveEntry => ({ name, kind: "symlink", linkTarget, size: 0 });
const hardlink = (name: string, linkTarget: string): ArchiveEntry => ({ name, kind: "hardlink", linkTarget, size: 0 });

describe("archive entry checks (before extraction)", () => {
  it("accepts ordinary layouts, including links that stay inside", () => {
    expect(() =>
      check([
        { name: "./", kind: "directory", size: 0 },
        file("./bin/agent"),
        file("lib/a.so.1"),
        symlink("lib/a.so", "a.so.1"),
        symlink("bin/lib", "../lib"),
        symlink("current", "."),
        hardlink("bin/agent-copy", "bin/agent"),
      ]),
    ).not.toThrow();
  });

  it.each([
    ["an absolute path", [file("/etc/passwd")], "/etc/passwd"],
    ["a Windows drive path", [file("C:/evil")], "C:/evil"],
    ["a '..' segment", [file("a/../../b")], "a/../../b"],
    ["a '..' even when it stays inside", [file("a/../b")], "a/../b"],
    ["a backslash", [file("a\\..\\b")], "a\\..\\b"],
    ["a NUL byte", [file("a\0b")], "a\0b"],
    ["an escaping symlink", [symlink("a/link", "../../x")], "a/link"],
    ["an absolute symlink", [symlink("link", "/")], "link"],
    ["a hardlink with '..'", [hardlink("h", "a/../b")], "h"],
    ["an absolute hardlink", [hardlink("h", "/etc/shadow")], "h"],
    ["a device", [{ name: "dev", kind: "special", size: 0, rawType: "BlockDevice" } as ArchiveEntry], "dev"],
    ["a file below a symlink declared later", [file("d/evil"), symlink("d", "sub")], "d/evil"],
    ["a symlink whose target passes through another symlink", [symlink("a/b", ".."), symlink("c", "a/b/..")], "c"],
    ["a hardlink created through a symlink", [symlink("s", "."), hardlink("h", "s")], "h"],
  ])("refuses %s as unsafe_archive_entry", (_label, entries, entry) => {
    expect(() => check(entries)).toThrow(
      expect.objectContaining({ reason: "unsafe_archive_entry", details: expect.objectContaining({ entry }) }),
    );
  });

  it("refuses archives that expand past the size or entry limits", () => {
    expect(() => check([file("a", 600), file("b", 600)])).toThrow(
      expect.objectContaining({ reason: "archive_too_large" }),
    );
    expect(() => check(Array.from({ length: 11 }, (_, i) => file(`f${i}`)))).toThrow(
      expect.objectContaining({ reason: "archive_too_large" }),
    );
  });
});
