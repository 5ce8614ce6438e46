// Untrusted text from the server never becomes markup.
import { describe, expect, it } from "vitest";
import { renderMarkdown, slugify, wikiTargets } from "../src/lib/markdown";
import { parseSnippet } from "../src/lib/snippet";

describe("parseSnippet", () => {
  it("marks only the text between <mark> markers", () => {
    expect(parseSnippet("a <mark>cat</mark> sat")).toEqual([
      { text: "a ", marked: false },
      { text: "cat", marked: true },
      { text: " sat", marked: false },
    ]);
  });

  it("keeps any other tag as plain text", () => {
    const parts = parseSnippet('<img src=x onerror=alert(1)> <mark><b>x</b></mark>');
    expect(parts).toEqual([
      { text: "<img src=x onerror=alert(1)> ", marked: false },
      { text: "<b>x</b>", marked: true },
    ]);
  });

  it("survives an unclosed marker", () => {
    expect(parseSnippet("x <mark>y")).toEqual([
      { text: "x ", marked: false },
      { text: "y", marked: true },
    ]);
  });
});

describe("renderMarkdown", () => {
  it("turns [[links]] into resolver links", () => {
    const html = renderMarkdown("See [[Deploy Guide]] and [[ops|the ops note]].");
    const div = document.createElement("div");
    div.innerHTML = html;
    const links = [...div.querySelectorAll<HTMLAnchorElement>("a.wikilink")];
    expect(links.map((a) => a.getAttribute("href"))).toEqual(["#/notes/resolve/Deploy%20Guide", "#/notes/resolve/ops"]);
    expect(links.map((a) => a.textContent)).toEqual(["Deploy Guide", "the ops note"]);
  });

  // Sanitizing (scripts, handlers, javascript: URLs) is checked in real Chromium
  // by the e2e suite: happy-dom's parser is not faithful enough for DOMPurify.

  it("lists wiki targets", () => {
    expect(wikiTargets("[[A]] [[B|b]] [[A]]")).toEqual(["A", "B"]);
  });
});

describe("unresolved wiki-links", () => {
  it("link to creating the note instead of resolving it", () => {
    const div = document.createElement("div");
    div.innerHTML = renderMarkdown("[[Known]] and [[Not Yet]]", ["not-yet"]);
    const [known, missing] = [...div.querySelectorAll<HTMLAnchorElement>("a.wikilink")];
    expect(known?.getAttribute("href")).toBe("#/notes/resolve/Known");
    expect(missing?.classList.contains("missing")).toBe(true);
    expect(missing?.getAttribute("href")).toBe("#/notes/new?title=Not%20Yet");
  });

  it("slugify matches the server's rule", () => {
    expect(slugify("  Hello, World!  ")).toBe("hello-world");
    expect(slugify("Rust 2024 -- edition")).toBe("rust-2024-edition");
    expect(slugify("Café Über")).toBe("café-über");
  });
});
