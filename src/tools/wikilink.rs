//! The `[[wiki-link]]` syntax of note content, as Obsidian writes it:
//! `[[Target]]`, `[[Target|alias]]`, `[[Target#Heading]]` (or `#^block`),
//! `![[Target]]` (an embed), and `[[Target\|alias]]` inside a table.
//!
//! [`parse`] is a pure function of the text, so it can be fuzzed on its own:
//! every link it returns has a non-empty target without `|`, `#`, `[`, `]`
//! or a line break, and its `span` is where it sits in the input.

use std::ops::Range;

/// One wiki-link found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WikiLink {
    /// The note named, trimmed (`Target` in `[[Target#Heading|alias]]`).
    pub target: String,
    /// The heading or block after `#`, trimmed, when given.
    pub heading: Option<String>,
    /// The text shown instead of the target (after `|`), trimmed, when given.
    pub alias: Option<String>,
    /// `![[...]]`: the target is shown inline rather than linked.
    pub embed: bool,
    /// Byte range of the whole link in the input, `!` of an embed included.
    pub span: Range<usize>,
}

/// Every wiki-link in `text`, in order. A link never spans lines; `[[` without
/// a closing `]]` on its line is text, and in `[[a [[b]]` only `[[b]]` is a link.
/// Links to the note itself (`[[#Heading]]`) and empty ones name no target
/// and are left out.
pub fn parse(text: &str) -> Vec<WikiLink> {
    let mut links = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find("[[") {
        let open = from + found;
        let inner_start = open + 2;
        let line_end = text[inner_start..]
            .find('\n')
            .map_or(text.len(), |n| inner_start + n);
        let line = &text[inner_start..line_end];
        let Some(close) = line.find("]]") else {
            from = inner_start;
            continue;
        };
        let inner = &line[..close];
        // `[[[x]]]`: the link starts one bracket later.
        if inner.starts_with('[') {
            from = open + 1;
            continue;
        }
        // A later `[[` before the `]]` starts the real link.
        if let Some(nested) = inner.rfind("[[") {
            from = inner_start + nested;
            continue;
        }
        let end = inner_start + close + 2;
        let embed = open > 0 && text.as_bytes()[open - 1] == b'!';
        let start = if embed { open - 1 } else { open };
        if let Some(link) = link_of(inner, embed, start..end) {
            links.push(link);
        }
        from = end;
    }
    links
}

fn link_of(inner: &str, embed: bool, span: Range<usize>) -> Option<WikiLink> {
    let (name, alias) = match inner.split_once('|') {
        // In a Markdown table the pipe is escaped: `[[Target\|alias]]`.
        Some((name, alias)) => (name.strip_suffix('\\').unwrap_or(name), Some(alias)),
        None => (inner, None),
    };
    let (target, heading) = match name.split_once('#') {
        Some((target, heading)) => (target, Some(heading)),
        None => (name, None),
    };
    let target = target.trim();
    if target.is_empty() || target.contains(['[', ']']) {
        return None;
    }
    let non_empty = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
    Some(WikiLink {
        target: target.to_owned(),
        heading: heading.and_then(non_empty),
        alias: alias.and_then(non_empty),
        embed,
        span,
    })
}

/// A title or link target as a note slug (how `[[Title]]` finds its note).
/// Lowercase, runs of non-alphanumerics become one `-`, no leading or trailing `-`.
pub fn slugify(title: &str) -> String {
    let mut slug = String::with_capacity(title.len());
    let mut dash = false;
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            if dash && !slug.is_empty() {
                slug.push('-');
            }
            dash = false;
            slug.push(c);
        } else {
            dash = true;
        }
    }
    slug
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(text: &str) -> Vec<String> {
        parse(text).into_iter().map(|l| l.target).collect()
    }

    #[test]
    fn a_plain_link_names_its_target_and_span() {
        let text = "see [[Release Plan]] now";
        let links = parse(text);
        assert_eq!(
            links,
            vec![WikiLink {
                target: "Release Plan".into(),
                heading: None,
                alias: None,
                embed: false,
                span: 4..20,
            }]
        );
        assert_eq!(&text[links[0].span.clone()], "[[Release Plan]]");
    }

    #[test]
    fn an_alias_follows_the_first_pipe() {
        let links = parse("[[Target|shown | text]]");
        assert_eq!(links[0].target, "Target");
        assert_eq!(links[0].alias.as_deref(), Some("shown | text"));
    }

    #[test]
    fn a_heading_or_block_follows_the_hash() {
        let links = parse("[[Guide#Install steps]] [[Guide#^abc123|see]]");
        assert_eq!(targets("[[Guide#Install steps]]"), ["Guide"]);
        assert_eq!(links[0].heading.as_deref(), Some("Install steps"));
        assert_eq!(links[1].heading.as_deref(), Some("^abc123"));
        assert_eq!(links[1].alias.as_deref(), Some("see"));
    }

    #[test]
    fn an_escaped_pipe_in_a_table_is_an_alias() {
        let links = parse("| a | [[Target\\|alias]] |");
        assert_eq!(links[0].target, "Target");
        assert_eq!(links[0].alias.as_deref(), Some("alias"));
    }

    #[test]
    fn an_embed_is_a_link_whose_span_takes_the_bang() {
        let text = "![[Diagram]] and [[Other]]";
        let links = parse(text);
        assert!(links[0].embed && !links[1].embed);
        assert_eq!(&text[links[0].span.clone()], "![[Diagram]]");
    }

    #[test]
    fn links_to_the_note_itself_and_empty_links_are_left_out() {
        assert!(targets("[[#Heading]] [[ ]] [[]] [[|alias]]").is_empty());
    }

    #[test]
    fn a_link_never_spans_lines_or_opens_without_closing() {
        assert!(targets("[[open\nclosed]]").is_empty());
        assert_eq!(targets("[[open and [[closed]]"), ["closed"]);
        assert_eq!(targets("[[a]] [[b"), ["a"]);
    }

    #[test]
    fn triple_brackets_keep_the_inner_link() {
        assert_eq!(targets("[[[x]]]"), ["x"].map(str::to_owned));
        assert!(targets("[[a]b]]").is_empty());
    }

    #[test]
    fn non_ascii_text_around_and_inside_links_is_kept() {
        let text = "漢字 [[Écrire — les notes|ノート]] ü";
        let links = parse(text);
        assert_eq!(links[0].target, "Écrire — les notes");
        assert_eq!(links[0].alias.as_deref(), Some("ノート"));
        assert!(text[links[0].span.clone()].starts_with("[["));
    }

    #[test]
    fn every_link_of_a_long_mixed_text_is_found_in_order() {
        let text = "[[A]] x ![[B#h]] y [[C|c]]\n[[D\\|d]] [[#self]] [[E";
        assert_eq!(targets(text), ["A", "B", "C", "D"]);
    }

    proptest::proptest! {
        /// What a fuzzer would check: no panic, and every link is well formed
        /// and sits where its span says, in order, without overlapping.
        #[test]
        fn every_link_is_well_formed_and_where_its_span_says(
            text in r"(\[\[|\]\]|[a-z #|!\\\n\[\]]|é){0,60}"
        ) {
            let mut last_end = 0;
            for link in parse(&text) {
                let raw = &text[link.span.clone()];
                proptest::prop_assert!(link.span.start >= last_end);
                let opening = if link.embed { "![[" } else { "[[" };
                proptest::prop_assert!(raw.starts_with(opening), "{raw}");
                proptest::prop_assert!(raw.ends_with("]]") && !raw.contains('\n'));
                proptest::prop_assert!(!link.target.is_empty());
                proptest::prop_assert!(!link.target.contains(['|', '#', '[', ']', '\n']));
                proptest::prop_assert_eq!(link.target.trim(), link.target.as_str());
                last_end = link.span.end;
            }
        }
    }
}
