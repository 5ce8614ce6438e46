//! Note content as Markdown: the `[[wiki-link]]` parser, the slugs a note's
//! links are stored as, front matter splitting, and the two front-matter
//! writers (a vault export's and the MCP resource's), each read back.
//!
//! Checked: no panic; every link sits where its span says, in order, and its
//! target, heading and alias are substrings of it; link slugs are unique,
//! non-empty and fixed points of `slugify` (a note's slug names it again);
//! `split` cuts the text without losing a byte; and whatever the title and
//! body, what an export or `note_markdown` writes reads back with the same
//! body, title and tags.
#![no_main]

use cairn::store::Note;
use cairn::tools::markdown::note_markdown;
use cairn::tools::notes::{slugify, wiki_links};
use cairn::tools::wikilink;
use cairn::vault::front_matter::{self, NoteFront};
use libfuzzer_sys::fuzz_target;

const ID: &str = "0123456789abcdef0123456789abcdef";
const AT: &str = "2026-12-01T00:00:00.000000Z";

fuzz_target!(|input: &[u8]| {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };

    let links = wikilink::parse(text);
    let mut last_end = 0;
    for link in &links {
        assert!(link.span.start >= last_end, "{links:?}");
        let raw = &text[link.span.clone()];
        assert!(
            raw.starts_with(if link.embed { "![[" } else { "[[" }),
            "{raw:?}"
        );
        assert!(raw.ends_with("]]") && !raw.contains('\n'), "{raw:?}");
        assert!(!link.target.is_empty() && link.target.trim() == link.target);
        assert!(
            !link.target.contains(['|', '#', '[', ']', '\n']),
            "{link:?}"
        );
        for part in [
            Some(&link.target),
            link.heading.as_ref(),
            link.alias.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            assert!(!part.is_empty() && raw.contains(part.as_str()), "{link:?}");
        }
        last_end = link.span.end;
    }

    let slugs = wiki_links(text);
    for (i, slug) in slugs.iter().enumerate() {
        assert!(!slug.is_empty());
        assert_eq!(&slugify(slug), slug, "a slug names itself");
        assert!(!slugs[..i].contains(slug), "{slugs:?}");
        assert!(links.iter().any(|l| &slugify(&l.target) == slug));
    }
    let whole = slugify(text);
    assert_eq!(slugify(&whole), whole, "slugify is idempotent");

    let bare = text.strip_prefix('\u{feff}').unwrap_or(text);
    let split = front_matter::split(text);
    assert!(bare.ends_with(split.body));
    match split.yaml {
        None => assert_eq!(split.body, bare),
        Some(yaml) => {
            let head = &bare[..bare.len() - split.body.len()];
            assert!(head.starts_with("---") && head.contains(yaml));
            let _ = front_matter::parse(yaml);
        }
    }

    // The text as a body, its first line as a title, its links' targets as tags.
    let title = text.lines().next().unwrap_or_default();
    let tags: Vec<String> = links.iter().map(|l| l.target.clone()).collect();
    let front = NoteFront {
        id: ID,
        title,
        tags: &tags,
        version: 2,
        source_url: None,
        created_at: AT,
        updated_at: AT,
    };
    let exported = front_matter::render(&front, text);
    let back = front_matter::split(&exported);
    assert_eq!(back.body, text, "an export keeps the body byte for byte");
    let read = front_matter::parse(back.yaml.expect("closed front matter"))
        .unwrap_or_else(|e| panic!("an export's front matter {e}"));
    assert_eq!(read.title.as_deref(), Some(title), "export title");
    assert_eq!(read.tags.as_ref(), Some(&tags), "export tags");
    assert_eq!(read.version, Some(2));

    let note = Note {
        id: ID.into(),
        title: title.into(),
        slug: slugify(title),
        content: text.into(),
        tags: tags.clone(),
        source_url: Some(title.into()),
        version: 2,
        created_at: AT.into(),
        updated_at: AT.into(),
        links: Vec::new(),
        unresolved_links: slugs.clone(),
    };
    let markdown = note_markdown(&note, false);
    let back = front_matter::split(&markdown);
    assert_eq!(back.body.strip_prefix('\n'), Some(text));
    let read = front_matter::parse(back.yaml.expect("closed front matter"))
        .unwrap_or_else(|e| panic!("note_markdown's front matter {e}"));
    assert_eq!(read.id.as_deref(), Some(ID));
    assert_eq!(read.title.as_deref(), Some(title), "note_markdown title");
    assert_eq!(
        read.source_url.as_deref(),
        Some(title),
        "note_markdown source_url"
    );
    assert_eq!(read.tags.as_ref(), Some(&tags), "note_markdown tags");
});
