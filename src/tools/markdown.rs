//! A note as one Markdown document: a short front-matter header with what an
//! agent needs to act on the note (id, version, tags, links), then its content.
//! MCP serves notes this way as `text/markdown` resources.

use crate::store::Note;

/// The note as Markdown: `---`-fenced front matter (YAML; strings are JSON
/// strings YAML reads as they are, see [`yaml_safe_json`]), a blank line, the content.
/// `truncated` says the content or a list was cut to fit a budget.
pub fn note_markdown(note: &Note, truncated: bool) -> String {
    let quoted = yaml_safe_json;
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

/// `s` as a JSON string that YAML reads back as the same text. serde_json
/// leaves DEL, the C1 controls, U+FEFF, U+FFFE, U+FFFF and the line
/// separators U+2028/U+2029 raw, which YAML refuses or folds (found by the
/// `markdown_links` fuzz target); they become `\uXXXX` escapes, which both read.
fn yaml_safe_json(s: &str) -> String {
    let json = serde_json::Value::from(s).to_string();
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if matches!(
            c,
            '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        ) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vault::front_matter;

    fn note(title: &str) -> Note {
        Note {
            id: "0123456789abcdef0123456789abcdef".into(),
            title: title.into(),
            slug: "s".into(),
            content: "body".into(),
            // Tags are stored trimmed (and read back trimmed).
            tags: vec![title.trim().into()],
            source_url: None,
            version: 1,
            created_at: String::new(),
            updated_at: String::new(),
            links: Vec::new(),
            unresolved_links: Vec::new(),
        }
    }

    #[test]
    fn characters_yaml_refuses_or_folds_read_back_unchanged() {
        for title in [
            "Titl\u{7f}e",
            "a\u{85}b",
            "c\u{9f}",
            "line\u{2028}sep\u{2029}",
            "\u{feff}bom",
            "\u{fffe}\u{ffff}",
            "quote \" back\\ tab\t nul\u{1}",
            "漢字 é",
        ] {
            let markdown = note_markdown(&note(title), false);
            let split = front_matter::split(&markdown);
            assert_eq!(split.body, "\nbody");
            let read = front_matter::parse(split.yaml.unwrap()).unwrap();
            assert_eq!(read.title.as_deref(), Some(title));
            assert_eq!(read.tags, Some(vec![title.trim().to_owned()]));
        }
    }
}
