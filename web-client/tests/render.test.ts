// Untrusted text from the server never becomes markup.
import { describe, expect, it } from "vitest";
import { renderMarkdown, slugify, wikiTargets } from "../src/lib/markdown";
import { parseSnippet } from "../src/lib/snippet";
import type { Outcome } from "../src/api/client";
import type { ErrorCategory, ErrorCode, Meta, Note } from "../src/api/types";
import { resolution } from "../src/views/Notes";

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

  it("keeps [[links]] in the project of the page", () => {
    location.hash = "#/p/web/notes/n1";
    try {
      const div = document.createElement("div");
      div.innerHTML = renderMarkdown("[[Known]], [[Missing]] and [[Other]]", {
        links: [{ id: "a1b2c3", slug: "known" }],
        unresolved_links: ["missing"],
      });
      const links = [...div.querySelectorAll<HTMLAnchorElement>("a.wikilink")];
      expect(links.map((a) => a.getAttribute("href"))).toEqual([
        "#/p/web/notes/a1b2c3",
        "#/p/web/notes/new?title=Missing",
        "#/p/web/notes/resolve/Other",
      ]);
    } finally {
      location.hash = "";
    }
  });

  // Sanitizing (scripts, handlers, javascript: URLs) is checked in real Chromium
  // by the e2e suite: happy-dom's parser is not faithful enough for DOMPurify.

  it("lists wiki targets", () => {
    expect(wikiTargets("[[A]] [[B|b]] [[A]]")).toEqual(["A", "B"]);
  });
});

describe("wiki-links the server resolved", () => {
  it("go straight to their note, by id", () => {
    const div = document.createElement("div");
    div.innerHTML = renderMarkdown("[[Known]], [[known|again]] and [[Other]]", {
      links: [{ id: "a1b2c3", slug: "known" }],
      unresolved_links: [],
    });
    const links = [...div.querySelectorAll<HTMLAnchorElement>("a.wikilink")];
    expect(links.map((a) => a.getAttribute("href"))).toEqual([
      "#/notes/a1b2c3",
      "#/notes/a1b2c3",
      "#/notes/resolve/Other",
    ]);
    expect(links[0]?.dataset.noteId).toBe("a1b2c3");
  });
});

describe("unresolved wiki-links", () => {
  it("link to creating the note instead of resolving it", () => {
    const div = document.createElement("div");
    div.innerHTML = renderMarkdown("[[Known]] and [[Not Yet]]", {
      links: [{ id: "a1b2c3", slug: "known" }],
      unresolved_links: ["not-yet"],
    });
    const [known, missing] = [...div.querySelectorAll<HTMLAnchorElement>("a.wikilink")];
    expect(known?.getAttribute("href")).toBe("#/notes/a1b2c3");
    expect(missing?.classList.contains("missing")).toBe(true);
    expect(missing?.getAttribute("href")).toBe("#/notes/new?title=Not%20Yet");
  });

  it("slugify matches the server's rule", () => {
    expect(slugify("  Hello, World!  ")).toBe("hello-world");
    expect(slugify("Rust 2024 -- edition")).toBe("rust-2024-edition");
    expect(slugify("Café Über")).toBe("café-über");
  });
});

describe("resolving a [[target]] the note view could not link", () => {
  const note = (over: Partial<Note> = {}): Note =>
    ({ id: "n1", title: "Deploy Guide", slug: "deploy-guide", content: "", tags: [], source_url: null, version: 1,
       created_at: "", updated_at: "", links: [], unresolved_links: [], ...over }) as Note;
  const failed = (code: ErrorCode, category: ErrorCategory, status: number): Outcome<Note> => ({
    ok: false,
    error: { status, body: { category, code, message: "m", retryable: false, request_id: "r", details: {}, suggestions: [] } },
  });
  const found = (n: Note): Outcome<Note> => ({ ok: true, data: n, meta: {} as Meta, status: 200 });

  it("goes to the note with that slug", () => {
    expect(resolution("Deploy Guide", found(note()))).toEqual({ id: "n1" });
  });

  it("offers to create it when no note has the slug", () => {
    expect(resolution("Nope", failed("note_not_found", "not_found", 404))).toBe("missing");
    expect(resolution("ops", failed("id_prefix_too_short", "validation", 400))).toBe("missing");
    // An id prefix that happens to match is not the note the link names.
    expect(resolution("deadbeef", found(note()))).toBe("missing");
  });

  it("shows other failures", () => {
    const r = resolution("X", failed("store_busy", "transient", 503));
    expect(r).toMatchObject({ error: { body: { code: "store_busy" } } });
  });
});
