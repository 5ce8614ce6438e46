//! A note as one Markdown document: a short front-matter header with what an
//! agent needs to act on the note (id, version, tags, links), then its content.
//! MCP serves notes this way as `text/markdown` resources.

use crate::store::Note;

/// The note as Markdown: `---`-fenced front matter (YAML; strings are JSON
/// strings, which YAML reads as they are), a blank line, the content.
/// `truncated` says the content or a list was cut to fit a budget.
pub fn note_markdown(note: &Note, truncated: bool) -> String {
    let quoted = |s: &str| serde_json::Value::from(s).to_string();
    let list = |items: &mut dyn Iterator<Item = &str>| {
        let items: Vec<String> = items.map(quoted).collect();
        format!("[{}]", items.join(", "))
    };
    let mut out = String::with_capacity(note.content.len() + 256);
    out.push_str("---\n");
    out.push_str(&format!("id: {}\n", note.id));
    out.push_str(&format!("title: {}\n", quoted(&note.title)));
    out.push_str(&format!("slug: {}\n", quoted(&note.slug)));
    out.push_str(&format!("version: {}\n", note.version));
    out.push_str(&format!("updated_at: {}\n", note.updated_at));
    out.push_str(&format!(
        "tags: {}\n",
        list(&mut note.tags.iter().map(String::as_str))
    ));
    if let Some(url) = &note.source_url {
        out.push_str(&format!("source_url: {}\n", quoted(url)));
    }
    out.push_str(&format!(
        "links: {}\n",
        list(&mut note.links.iter().map(|l| l.slug.as_str()))
    ));
    if !note.unresolved_links.is_empty() {
        out.push_str(&format!(
            "unresolved_links: {}\n",
            list(&mut note.unresolved_links.iter().map(String::as_str))
        ));
    }
    if truncated {
        out.push_str("truncated: true\n");
    }
    out.push_str("---\n\n");
    out.push_str(&note.content);
    out
}
