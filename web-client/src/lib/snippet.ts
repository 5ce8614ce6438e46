// Search snippets arrive as plain text with `<mark>`…`</mark>` around matches.
// Only those two markers mean anything; every other character is text, so the
// result is rendered as text nodes and can never inject markup.

export interface SnippetPart {
  text: string;
  marked: boolean;
}

const OPEN = "<mark>";
const CLOSE = "</mark>";

export function parseSnippet(snippet: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  let rest = snippet;
  let marked = false;
  while (rest.length > 0) {
    const marker = marked ? CLOSE : OPEN;
    const at = rest.indexOf(marker);
    if (at === -1) {
      parts.push({ text: rest, marked });
      break;
    }
    if (at > 0) parts.push({ text: rest.slice(0, at), marked });
    rest = rest.slice(at + marker.length);
    marked = !marked;
  }
  // Merge neighbours of the same kind (e.g. an empty <mark></mark> pair).
  return parts.reduce<SnippetPart[]>((out, p) => {
    const last = out[out.length - 1];
    if (last && last.marked === p.marked) last.text += p.text;
    else if (p.text) out.push({ ...p });
    return out;
  }, []);
}
