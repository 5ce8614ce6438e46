// Note bodies are Markdown with [[wiki-links]]. marked renders, DOMPurify
// removes anything executable (raw HTML in a note is allowed but defanged), and
// [[Target]] / [[Target|label]] become links that the router resolves.
import DOMPurify from "dompurify";
import { Marked, type TokenizerAndRendererExtension } from "marked";
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


// Slugs the server reported as unresolved for the note being rendered (set per call).
let unresolved: ReadonlySet<string> = new Set();

/** The hash route that resolves a wiki-link target to a note. */
export function wikiHref(target: string): string {
  return `#/notes/resolve/${encodeURIComponent(target.trim())}`;
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
    if (unresolved.has(slugify(target))) {
      const create = `#/notes/new?title=${encodeURIComponent(target)}`;
      return `<a class="wikilink missing" href="${escapeHtml(create)}" title="No note yet: create it">${label}</a>`;
    }
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

/** Sanitized HTML for a note's Markdown; links to `unresolvedSlugs` offer to create the note. */
export function renderMarkdown(source: string, unresolvedSlugs: readonly string[] = []): string {
  // Without a DOM to sanitize in, show the source as text rather than trust it.
  if (!DOMPurify.isSupported) return `<pre>${escapeHtml(source)}</pre>`;
  unresolved = new Set(unresolvedSlugs);
  let html: string;
  try {
    html = marked.parse(source) as string;
  } finally {
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
