//! YAML front matter: the `---` block at the top of a Markdown file, read
//! leniently (keys cairn does not know are ignored, as Obsidian's own are)
//! and written in a fixed key order so exports are stable.

use serde::Serialize;
use serde_norway::Value;

/// A Markdown file cut into its front matter (when it has a closed block)
/// and its body. The body is everything after the closing line, byte for
/// byte, so `---\n{yaml}---\n{body}` reads back as `{body}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<'a> {
    pub yaml: Option<&'a str>,
    pub body: &'a str,
}

/// Splits `text` (a leading byte-order mark is dropped). Front matter opens
/// with a first line `---` and closes with a line `---` or `...`; without the
/// closing line the whole text is the body.
pub fn split(text: &str) -> Split<'_> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Split {
            yaml: None,
            body: text,
        };
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == "---" || bare == "..." {
            return Split {
                yaml: Some(&rest[..offset]),
                body: &rest[offset + line.len()..],
            };
        }
        offset += line.len();
    }
    Split {
        yaml: None,
        body: text,
    }
}

/// What cairn reads from front matter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrontMatter {
    pub id: Option<String>,
    pub title: Option<String>,
    pub tags: Option<Vec<String>>,
    pub source_url: Option<String>,
    /// The note's version when it was exported.
    pub version: Option<i64>,
    /// `cairn: tasks` marks a task file of an export (not a note).
    pub cairn: Option<String>,
}

/// Parses a front matter block. An empty block is no keys; anything but a
/// mapping, or a known key of the wrong type, is an error saying which.
pub fn parse(yaml: &str) -> Result<FrontMatter, String> {
    if yaml.trim().is_empty() {
        return Ok(FrontMatter::default());
    }
    let value: Value = serde_norway::from_str(yaml).map_err(|e| format!("is not YAML ({e})"))?;
    let map = match value {
        Value::Null => return Ok(FrontMatter::default()),
        Value::Mapping(map) => map,
        _ => return Err("is not a mapping of keys to values".to_owned()),
    };
    let get = |key: &str| map.get(key).filter(|v| !v.is_null());
    Ok(FrontMatter {
        id: get("id").map(|v| text("id", v)).transpose()?,
        title: get("title").map(|v| scalar_text("title", v)).transpose()?,
        tags: get("tags").map(tags).transpose()?,
        source_url: get("source_url")
            .map(|v| text("source_url", v))
            .transpose()?,
        version: get("version")
            .map(|v| {
                v.as_i64()
                    .ok_or_else(|| "has a `version` that is not a whole number".to_owned())
            })
            .transpose()?,
        cairn: get("cairn").map(|v| text("cairn", v)).transpose()?,
    })
}

fn text(key: &str, value: &Value) -> Result<String, String> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("has a `{key}` that is not text"))
}

/// Text, or a number or boolean as written (`title: 2024`).
fn scalar_text(key: &str, value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err(format!("has a `{key}` that is not text")),
    }
}

/// `tags: [a, b]`, a list, or one text of tags split on commas and spaces;
/// a leading `#` (Obsidian's inline form) is dropped.
fn tags(value: &Value) -> Result<Vec<String>, String> {
    let words: Vec<String> = match value {
        Value::Sequence(items) => items
            .iter()
            .map(|item| scalar_text("tags", item))
            .collect::<Result<_, _>>()?,
        other => scalar_text("tags", other)?
            .split([',', ' ', '\t'])
            .map(str::to_owned)
            .collect(),
    };
    Ok(words
        .iter()
        .map(|w| w.trim().trim_start_matches('#').to_owned())
        .filter(|w| !w.is_empty())
        .collect())
}

/// The front matter an export writes for a note, in this key order.
#[derive(Debug, Serialize)]
pub struct NoteFront<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub tags: &'a [String],
    pub version: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_url: Option<&'a str>,
    pub created_at: &'a str,
    pub updated_at: &'a str,
}

/// The front matter of an export's task file.
#[derive(Debug, Serialize)]
pub struct TasksFront<'a> {
    pub cairn: &'a str,
    pub status: &'a str,
    pub count: usize,
}

/// `---\n{yaml}---\n{body}`.
pub fn render(front: &impl Serialize, body: &str) -> String {
    let yaml = serde_norway::to_string(front).unwrap_or_default();
    format!("---\n{yaml}---\n{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_block_is_front_matter_and_the_rest_is_the_body() {
        let s = split("---\ntitle: A\n---\n\nBody\n---\nmore");
        assert_eq!(s.yaml, Some("title: A\n"));
        assert_eq!(s.body, "\nBody\n---\nmore");
    }

    #[test]
    fn an_unclosed_block_or_a_late_rule_is_all_body() {
        assert_eq!(split("---\ntitle: A\n").yaml, None);
        assert_eq!(split("text\n---\n").body, "text\n---\n");
    }

    #[test]
    fn crlf_dots_and_a_byte_order_mark_are_understood() {
        let s = split("\u{feff}---\r\ntitle: A\r\n...\r\nbody");
        assert_eq!(s.yaml, Some("title: A\r\n"));
        assert_eq!(s.body, "body");
    }

    #[test]
    fn rendered_front_matter_reads_back_with_the_same_body() {
        let tags = vec!["a b".to_owned(), "漢字".to_owned()];
        let front = NoteFront {
            id: "0123456789abcdef0123456789abcdef",
            title: "Title: with \"quotes\" and # hash",
            tags: &tags,
            version: 3,
            source_url: Some("https://example.com/x?y=1"),
            created_at: "2026-12-01T00:00:00.000000Z",
            updated_at: "2026-12-01T00:00:00.000000Z",
        };
        for body in ["", "---\nnot front matter\n---\n", "# Heading\n\ntext"] {
            let text = render(&front, body);
            let s = split(&text);
            assert_eq!(s.body, body);
            let read = parse(s.yaml.unwrap()).unwrap();
            assert_eq!(read.id.as_deref(), Some(front.id));
            assert_eq!(read.title.as_deref(), Some(front.title));
            assert_eq!(read.tags, Some(tags.clone()));
            assert_eq!(read.version, Some(3));
            assert_eq!(read.source_url.as_deref(), front.source_url);
        }
    }

    #[test]
    fn an_all_digit_id_stays_text() {
        let tags = Vec::new();
        let id = "01234567890123456789012345678901";
        let text = render(
            &NoteFront {
                id,
                title: "1e5",
                tags: &tags,
                version: 1,
                source_url: None,
                created_at: "",
                updated_at: "",
            },
            "",
        );
        let read = parse(split(&text).yaml.unwrap()).unwrap();
        assert_eq!(read.id.as_deref(), Some(id));
        assert_eq!(read.title.as_deref(), Some("1e5"));
    }

    #[test]
    fn obsidian_tag_forms_and_unknown_keys_are_read() {
        let read = parse("tags: \"#a, b  #c\"\naliases: [x]\ncssclass: wide\n").unwrap();
        assert_eq!(read.tags, Some(vec!["a".into(), "b".into(), "c".into()]));
        let read = parse("tags:\n  - one\n  - 2024\ntitle: 2024\n").unwrap();
        assert_eq!(read.tags, Some(vec!["one".into(), "2024".into()]));
        assert_eq!(read.title.as_deref(), Some("2024"));
    }

    #[test]
    fn broken_or_mistyped_front_matter_says_what_is_wrong() {
        assert!(
            parse("title: [unclosed")
                .unwrap_err()
                .starts_with("is not YAML")
        );
        assert!(parse("- a\n- b").unwrap_err().contains("mapping"));
        assert!(parse("id: [1]").unwrap_err().contains("`id`"));
        assert!(parse("version: two").unwrap_err().contains("`version`"));
        assert_eq!(parse("").unwrap(), FrontMatter::default());
        assert_eq!(parse("# only a comment\n").unwrap(), FrontMatter::default());
    }
}
