// Note bodies are Markdown with [[wiki-links]]. marked renders, DOMPurify
// removes anything executable (raw HTML in a note is allowed but defanged), and
// [[Target]] / [[Target|label]] become links to the notes the server resolved.
import DOMPurify from "dompurify";
import { Marked, type TokenizerAndRendererExtension } from "marked";
import { href } from "./router";
import { slugify } from "./slug";

export { slugify };

export const WIKI_LINK = /\[\[([^\[\]|\n]+)(?:\|([^\[\]\n]+))?\]\]/g;

function escapeHtml(s: string): string {
  return s
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}


/** What the server says a note's [[links]] name (note_read's `links` and `unresolved_links`). */
export interface WikiLinks {
  links?: readonly { id: string; slug: string }[];
  unresolved_links?: readonly string[];
}

// The note being rendered: its resolved links by slug, and its unresolved slugs (set per call).
let resolved: ReadonlyMap<string, string> = new Map();
let unresolved: ReadonlySet<string> = new Set();

/** The hash route that resolves a wiki-link target to a note (of the page's project). */
export function wikiHref(target: string): string {
  return href.noteResolve(target.trim());
}

const wikiLink: TokenizerAndRendererExtension = {
  name: "wikiLink",
  level: "inline",
  start(src: string) {
    const at = src.indexOf("[[");
    return at === -1 ? undefined : at;
  },
  tokenizer(src: string) {
    const m = /^\[\[([^\[\]|\n]+)(?:\|([^\[\]\n]+))?\]\]/.exec(src);
    if (!m) return undefined;
    const target = (m[1] ?? "").trim();
    return { type: "wikiLink", raw: m[0], target, label: (m[2] ?? target).trim() };
  },
  renderer(token) {
    const target = String(token.target);
    const label = escapeHtml(String(token.label));
    const slug = slugify(target);
    const id = resolved.get(slug);
    if (id !== undefined) {
      const to = href.note(id);
      return `<a class="wikilink" href="${escapeHtml(to)}" data-note-id="${escapeHtml(id)}">${label}</a>`;
    }
    if (unresolved.has(slug)) {
      const create = href.newNote(target);
      return `<a class="wikilink missing" href="${escapeHtml(create)}" title="No note yet: create it">${label}</a>`;
    }
    // Not in the server's answer (e.g. the note was written meanwhile): the resolver asks.
    return `<a class="wikilink" href="${escapeHtml(wikiHref(target))}" data-target="${escapeHtml(target)}">${label}</a>`;
  },
};

const marked = new Marked({ gfm: true, breaks: false, async: false });
marked.use({ extensions: [wikiLink] });

let hooked = false;
function purifier() {
  if (!hooked) {
    // Links that leave the app open in a new tab and cannot reach back.
    DOMPurify.addHook("afterSanitizeAttributes", (node) => {
      if (node.tagName === "A") {
        const href = node.getAttribute("href") ?? "";
        if (!href.startsWith("#")) {
          node.setAttribute("target", "_blank");
          node.setAttribute("rel", "noopener noreferrer");
        }
      }
    });
    hooked = true;
  }
  return DOMPurify;
}

/**
 * Sanitized HTML for a note's Markdown. [[Links]] the server resolved go
 * straight to their note; unresolved ones offer to create it.
 */
export function renderMarkdown(source: string, wiki: WikiLinks = {}): string {
  // Without a DOM to sanitize in, show the source as text rather than trust it.
  if (!DOMPurify.isSupported) return `<pre>${escapeHtml(source)}</pre>`;
  resolved = new Map((wiki.links ?? []).map((l) => [l.slug, l.id]));
  unresolved = new Set(wiki.unresolved_links ?? []);
  let html: string;
  try {
    html = marked.parse(source) as string;
  } finally {
    resolved = new Map();
    unresolved = new Set();
  }
  return purifier().sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed"],
    FORBID_ATTR: ["style"],
  });
}

/** The distinct [[targets]] a Markdown source links to. */
export function wikiTargets(source: string): string[] {
  const out = new Set<string>();
  for (const m of source.matchAll(WIKI_LINK)) out.add((m[1] ?? "").trim());
  return [...out];
}
