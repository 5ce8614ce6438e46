//! The budget trimmer: fits an envelope into its tier's size limit (docs/contract.md,
//! "Budgets").
//!
//! `render` owns everything about the emitted text: its frame, the budget fields
//! of `meta`, and the cuts. The work is split in three linear passes:
//!
//! 1. [`measure`] serializes `data` once into a buffer and, on the way, records the
//!    size of every element (bottom-up) in a small tree of *regions*. When the whole
//!    payload fits, that buffer is the answer.
//! 2. [`plan`] decides the cuts on those sizes alone, never re-serializing anything.
//! 3. The cuts are applied to the owned `data` in place, which is serialized once.
//!
//! # Sizes
//!
//! Every piece of compact JSON weighs `units = ascii_bytes + 4 * non_ascii_chars`.
//! Units add up across concatenation, and for a whole text
//! `size = max(chars, 4 * tokens) = 4 * ceil(ascii / 4) + 4 * non_ascii <= units + 3`,
//! so the planner works on units against `limit - 3` and the result always fits.
//! The trim entries written into `meta.trimmed` are charged to the cut that makes
//! them, so the markers are inside the budget too.
//!
//! # The rules
//!
//! A *region* is a value seen down to, not into, its arrays: its keys, numbers,
//! booleans and short strings are its fixed part; its arrays (at any depth of
//! objects) and its strings of 200 chars or more are what can be cut. There is no
//! registry of trimmable keys: every array is cut the same way.
//!
//! - **Fair by bytes (water-filling).** The arrays of a region share what the fixed
//!   part leaves. A level `L` is chosen as high as fits: an array whose content
//!   weighs at most `L` stays whole, every other one keeps the longest prefix of
//!   whole items weighing at most `L` with its trim entry (an array is kept whole
//!   when cutting it would not make it lighter). So large arrays are cut before small ones and
//!   a small array is never drained to pay for a big one.
//! - **No array emptied while another keeps more than one item.** Every non-empty
//!   array keeps at least its first item while the *skeleton* (every array reduced
//!   to its first item, itself reduced the same way) fits.
//! - **Nested arrays.** Kept items are whole, except when an array keeps only its
//!   first item and that item alone is over the array's allowance: then the item is a
//!   region of its own and its inner arrays share that allowance by the same rule.
//! - **Strings last.** Strings of 200 chars or more are shortened only when the
//!   skeleton with every string whole does not fit. They then share what is left by
//!   the same water-filling (by units), each cut string ending in `…[truncated]`.
//!   A `string` entry's `from`/`to` are the char lengths of the tool's string and of
//!   the emitted one (marker included). A string is cut only when that makes it
//!   weigh less; for CJK text near 200 chars the emitted one can have more chars
//!   (the ASCII marker weighs less than the CJK chars it replaces).
//! - **When even the skeleton with minimal strings does not fit**, arrays are reduced
//!   to at most one item each, then emptied largest first (by what each still weighs
//!   with its long strings at their minimum, ties in document order) until the rest
//!   fits; strings then share what is left. If everything that can be cut is cut
//!   and the envelope is still over, `envelope_unshrinkable` is set: what remains is
//!   keys, scalars, short strings, string markers and meta (trim entries included).
//! - **Graphs.** An object holding a non-empty `nodes` and an `edges` array, whose
//!   edges are empty or at least one of them names two nodes, is cut as one
//!   participant. Nodes are named by `id`, `uid` or `key`, edge ends by
//!   `source`/`target`, `source_uid`/`target_uid`, `from`/`to` or `src`/`dst`:
//!   of the keys the first node and the first edge hold, the pair that joins
//!   the most edges to nodes (ties to the earlier in these lists). When no edge
//!   resolves (ends named with other keys) its arrays are plain lists under the
//!   fair rules above. A graph is cut as nodes ranked by degree (ties by original order), the top `K` kept
//!   in original order, edges kept only when both ends are kept. It writes two
//!   entries of kind `subgraph`, `…/nodes` (node counts) and, when edges were
//!   dropped, `…/edges` (edge counts); these are subsets in original order, not
//!   prefixes. A node's degree counts the edges whose two ends are nodes of the
//!   graph; edges pointing at unknown ids are kept only while the graph is whole.
//!   The edges follow the nodes, so they may be emptied (no edge between the kept
//!   nodes) while other arrays keep more: the no-emptying rule is about nodes.
//! - **Paths** are JSON Pointers into the emitted `data` (for a kept prefix, the
//!   same as into the tool's): a graph's lone kept node is `…/nodes/0`.
//! - **Numbers, booleans, keys and strings under 200 chars are never altered.**
//! - **Failures** are never trimmed, but are small on every surface: long
//!   values they echo are cut with the marker ([`failure`]). One still over the
//!   limit is flagged `envelope_unshrinkable`.
//! - **Reserved meta keys** (and the names of meta's own fields) that a tool put in
//!   `meta.extra` are dropped before rendering.

mod failure;
mod layout;
mod measure;
mod plan;

pub use layout::{Layout, render_laid_out};
pub use measure::{END_KEYS as GRAPH_END_KEYS, NODE_KEYS as GRAPH_NODE_KEYS};

use std::sync::LazyLock;

use bytes::Bytes;
use serde_json::Value;

use super::{Envelope, ErrorBody, Meta, RESERVED_META_KEYS};

/// Which size limit applies; chosen by the surface, never by the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// MCP and CLI answers: 32,000 size units.
    Agent,
    /// Safety net for REST answers shaped `{nodes, edges}`: 5,000,000.
    Graph,
    /// Browser answers: no limit (lists are paginated instead).
    None,
}

impl Tier {
    pub const fn limit(self) -> Option<usize> {
        match self {
            Tier::Agent => Some(32_000),
            Tier::Graph => Some(5_000_000),
            Tier::None => None,
        }
    }

    /// The tier of a REST answer: the graph safety net for graph shapes, else none.
    pub fn browser_for(data: &Value) -> Tier {
        let is_graph = data.get("nodes").is_some_and(Value::is_array)
            && data.get("edges").is_some_and(Value::is_array);
        if is_graph { Tier::Graph } else { Tier::None }
    }
}

/// The outer shape of the emitted text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `{"ok":..,"data"|"error":..,"meta":..}`: MCP and CLI.
    Envelope,
    /// `{"data":..,"meta":..}` on success, `{"error":..}` on failure: REST bodies.
    Rest,
}

/// Strings with at least this many chars may be shortened; shorter ones never are.
pub const LONG_STRING_CHARS: usize = 200;

/// What ends a shortened string.
pub const STRING_MARKER: &str = "…[truncated]";

/// ceil(ascii_chars / 4) + non_ascii_chars.
pub fn estimate_tokens(text: &str) -> u64 {
    Counts::of(text.as_bytes()).tokens()
}

/// The size of a text under the contract: max(chars, 4 * tokens_estimated).
pub fn size_of(text: &str) -> u64 {
    let counts = Counts::of(text.as_bytes());
    (counts.ascii + counts.non_ascii).max(4 * counts.tokens())
}

/// Renders the envelope as compact JSON within the tier's limit.
pub fn render(envelope: Envelope, tier: Tier, form: Form) -> String {
    render_with_limit(envelope, tier.limit(), form)
}

/// Renders the envelope in `layout` within the tier's limit, measured on the
/// text returned (the CLI prints it as is).
pub fn render_printed(envelope: Envelope, tier: Tier, form: Form, layout: Layout) -> String {
    render_laid_out(envelope, tier.limit(), form, layout)
}

/// [`render`] with an explicit limit (`None`: no budget); tests use small limits.
pub fn render_with_limit(envelope: Envelope, limit: Option<usize>, form: Form) -> String {
    render_parts(envelope, limit, form).text
}

/// [`render`] in the envelope form, with the emitted success envelope also as
/// a value (`{"ok": true, "data", "meta"}`, equal to the text parsed), made
/// from the data the text was serialized from rather than by parsing it back:
/// MCP sends both. `None` for a failure.
pub fn render_structured(envelope: Envelope, tier: Tier) -> (String, Option<Value>) {
    let Rendered { text, data, meta } = render_parts(envelope, tier.limit(), Form::Envelope);
    let structured = data.map(|data| {
        let mut object = serde_json::Map::with_capacity(3);
        object.insert("ok".into(), Value::Bool(true));
        object.insert("data".into(), data);
        object.insert(
            "meta".into(),
            serde_json::to_value(&meta).expect("meta always serializes"),
        );
        Value::Object(object)
    });
    (text, structured)
}

/// The emitted text, and for a success the data it holds (after any cuts)
/// with the meta as emitted.
struct Rendered {
    text: String,
    data: Option<Value>,
    meta: Meta,
}

/// A success rendered once to be answered again over REST, with no budget
/// (what [`Tier::None`] renders: the data goes out whole), for a cache: every
/// byte of its answers but the meta's request id, runtime and token estimate,
/// which [`Prerendered::answer`] writes in. The text before the request id
/// (the data is in it) is shared by every answer, never copied or counted
/// again.
#[derive(Debug)]
pub struct Prerendered {
    /// `{"data":…,"meta":{…,"request_id":`
    head: Bytes,
    /// From after the runtime to the token estimate:
    /// `,"warnings":[…],"tokens_estimated":`.
    middle: String,
    /// After the token estimate: `,"truncated":false,…}}`.
    tail: String,
    /// Of the head, the middle, the tail and the estimate as one digit.
    counts: Counts,
    /// [`digest`] of the data's JSON.
    digest: u64,
    /// The tool that answered.
    tool: String,
}

/// The meta's fields whose values each answer has its own, as
/// [`serialize_meta`] writes them in order, and the text around them with
/// the request id empty, the runtime 0 and the estimate 0: found by that
/// text, which no string of the meta can hold unescaped.
const ID_KEY: &str = "\"request_id\":";
const RUNTIME_KEY: &str = ",\"runtime_ms\":";
const TOKENS_KEY: &str = "\"tokens_estimated\":";
const AROUND_RUNTIME: &str = "\"request_id\":\"\",\"runtime_ms\":0.0,";
const AROUND_TOKENS: &str = "\"tokens_estimated\":0,\"truncated\":";

impl Prerendered {
    /// The answer of `data` and `meta`; `None` if its meta could not be
    /// taken apart (it always can: then it is simply not kept).
    pub fn new(data: &Value, meta: &Meta) -> Option<Self> {
        let json = serde_json::to_string(data).expect("a JSON value always serializes");
        let mut meta = meta.clone();
        reset_budget_fields(&mut meta);
        meta.request_id.clear();
        meta.runtime_ms = 0.0;
        let zero = serialize_meta(&meta);
        let around_runtime = zero.find(AROUND_RUNTIME)?;
        let id = around_runtime + ID_KEY.len();
        // The comma after the runtime starts the middle.
        let after_runtime = around_runtime + AROUND_RUNTIME.len() - 1;
        let tokens = after_runtime + zero[after_runtime..].find(AROUND_TOKENS)? + TOKENS_KEY.len();
        let (open, middle, close) = frame_parts(true, Form::Rest);
        let head = [open, &json, middle, &zero[..id]].concat();
        let middle = zero[after_runtime..tokens].to_owned();
        let tail = [&zero[tokens + 1..], close].concat();
        let counts = Counts::of(head.as_bytes())
            + Counts::of(middle.as_bytes())
            + Counts::of(tail.as_bytes())
            + Counts::of(b"0");
        Some(Self {
            head: Bytes::from(head),
            middle,
            tail,
            counts,
            digest: digest(&json),
            tool: meta.tool,
        })
    }

    /// The answer for `request_id`, which took `runtime_ms`: the shared
    /// head, then the rest, the text [`render`] makes of the same envelope.
    pub fn answer(&self, request_id: &str, runtime_ms: f64) -> (Bytes, Vec<u8>) {
        let mut rest =
            Vec::with_capacity(request_id.len() + 64 + self.middle.len() + self.tail.len());
        erased_json::Write::write(&request_id, &mut rest);
        rest.extend_from_slice(RUNTIME_KEY.as_bytes());
        erased_json::Write::write(&runtime_ms, &mut rest);
        // The request id, the runtime's key and the runtime: this answer's own.
        let own = Counts::of(&rest);
        rest.extend_from_slice(self.middle.as_bytes());
        let tokens = tokens_of(self.counts + own);
        rest.extend_from_slice(itoa::Buffer::new().format(tokens).as_bytes());
        rest.extend_from_slice(self.tail.as_bytes());
        (self.head.clone(), rest)
    }

    /// [`digest`] of the data's JSON, taken once.
    pub fn digest(&self) -> u64 {
        self.digest
    }

    /// The bytes it holds.
    pub fn bytes(&self) -> usize {
        self.head.len() + self.middle.len() + self.tail.len()
    }

    /// The tool that answered.
    pub fn tool(&self) -> &str {
        &self.tool
    }
}

/// A hash of a JSON text: equal texts, equal digests, in every process of
/// one build (what a REST answer's weak `ETag` is made of).
pub fn digest(json: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    json.hash(&mut hasher);
    hasher.finish()
}

/// The data of a REST success as [`render`] framed it: after the frame's
/// opening, up to the last `,"meta":` (the meta comes last, and no text of
/// it holds that sequence: its strings escape their quotes). `None` for any
/// other text.
pub fn rest_data(text: &str) -> Option<&str> {
    let (open, middle, _) = frame_parts(true, Form::Rest);
    let framed = text.strip_prefix(open)?;
    Some(&framed[..framed.rfind(middle)?])
}

/// The meta fields only the render sets: cleared before it sets them.
fn reset_budget_fields(meta: &mut Meta) {
    meta.extra.retain(|key, _| !is_meta_field(key));
    meta.tokens_estimated = 0;
    meta.truncated = false;
    meta.trimmed.clear();
    meta.envelope_unshrinkable = None;
}

fn render_parts(envelope: Envelope, limit: Option<usize>, form: Form) -> Rendered {
    let Envelope { outcome, mut meta } = envelope;
    reset_budget_fields(&mut meta);

    let data = match outcome {
        Err(mut error) => {
            // Failures are small by construction: long echoed values are cut.
            failure::bound(&mut error);
            let mut text = frame(Body::Error(&error), &mut meta, form, None);
            let over = limit.is_some_and(|limit| size_of(&text) > limit as u64);
            if over && form != Form::Rest {
                meta.envelope_unshrinkable = Some(true);
                text = frame(Body::Error(&error), &mut meta, form, None);
            }
            return Rendered {
                text,
                data: None,
                meta,
            };
        }
        Ok(data) => data,
    };
    let Some(limit) = limit else {
        let json = serde_json::to_string(&data).expect("a JSON value always serializes");
        let text = frame(Body::Data(&json), &mut meta, form, None);
        return Rendered {
            text,
            data: Some(data),
            meta,
        };
    };

    let meta_zero = serialize_meta(&meta);
    let budget = (limit as u64).saturating_sub(planning_frame_units(&meta_zero, form) + 3);
    // Most answers fit: serialized and counted once, and measured region by
    // region only when something must be cut (units add up, so the whole
    // text's units are the measure's `root.full`).
    if let Some(json) = serialize_within(&data, budget) {
        let counts = Counts::of(json.as_bytes());
        if counts.units() <= budget {
            // Nothing was cut: the meta is the one planned with.
            let body = Body::Counted(&json, counts);
            let text = frame(body, &mut meta, form, Some(meta_zero));
            return Rendered {
                text,
                data: Some(data),
                meta,
            };
        }
    }
    let measured = measure::measure(&data);
    let plan = plan::plan(&measured, budget);
    let mut data = data;
    let trims = plan::apply(&measured, &plan, &mut data);
    drop(measured);
    for trim in &trims {
        let kind = match trim.kind {
            super::TrimKind::List => "list",
            super::TrimKind::String => "string",
            super::TrimKind::Subgraph => "subgraph",
        };
        metrics::counter!(crate::metrics::TRIMMER_CUTS, "kind" => kind).increment(1);
    }
    meta.truncated = !trims.is_empty();
    meta.trimmed = trims;
    let json = serde_json::to_string(&data).expect("a JSON value always serializes");
    let mut text = frame(Body::Data(&json), &mut meta, form, None);
    // The plan's bounds are conservative (widest numbers in the entries and
    // in tokens_estimated): an answer it could not fit may fit after all,
    // and is flagged only when the text itself is over.
    if plan.unshrinkable && size_of(&text) > limit as u64 {
        meta.envelope_unshrinkable = Some(true);
        text = frame(Body::Data(&json), &mut meta, form, None);
    }
    Rendered {
        text,
        data: Some(data),
        meta,
    }
}

/// Meta keys a tool may not put in `extra`: the reserved ones and meta's own fields.
fn is_meta_field(key: &str) -> bool {
    RESERVED_META_KEYS.contains(&key) || matches!(key, "tool" | "layer" | "warnings")
}

/// Units of the frame and meta around `data`, before any cut, with room for the
/// largest possible `tokens_estimated` (`meta_zero`: the meta serialized with
/// it 0; `u64::MAX` has 19 digits more).
fn planning_frame_units(meta_zero: &str, form: Form) -> u64 {
    let (open, _, close) = frame_parts(true, form);
    let units = |b: &[u8]| Counts::of(b).units();
    let widest_number = u64::from(u64::MAX.ilog10());
    units(open.as_bytes())
        + units(close.as_bytes())
        + units(meta_zero.as_bytes())
        + widest_number
        + units(b",\"meta\":")
}

enum Body<'a> {
    Data(&'a str),
    /// Data with the counts of its text already made.
    Counted(&'a str, Counts),
    Error(&'a ErrorBody),
}

/// Text before the body, between body and meta, and after meta.
fn frame_parts(ok: bool, form: Form) -> (&'static str, &'static str, &'static str) {
    match (ok, form) {
        (true, Form::Envelope) => ("{\"ok\":true,\"data\":", ",\"meta\":", "}"),
        (false, Form::Envelope) => ("{\"ok\":false,\"error\":", ",\"meta\":", "}"),
        (true, Form::Rest) => ("{\"data\":", ",\"meta\":", "}"),
        (false, Form::Rest) => ("{\"error\":", "", "}"),
    }
}

/// Assembles the emitted text, setting `tokens_estimated` to the estimate of that
/// very text: the number's own digits count, so it is solved as a fixpoint. The
/// body is serialized and counted once; so is the small meta (`meta_zero`: meta
/// serialized with `tokens_estimated` 0, when the caller has it), whose number
/// is then written in place.
fn frame(body: Body<'_>, meta: &mut Meta, form: Form, meta_zero: Option<String>) -> String {
    let error_json;
    let (ok, body, body_counts) = match body {
        Body::Data(json) => (true, json, Counts::of(json.as_bytes())),
        Body::Counted(json, counts) => (true, json, counts),
        Body::Error(error) => {
            error_json = serde_json::to_string(error).expect("an error body always serializes");
            (
                false,
                error_json.as_str(),
                Counts::of(error_json.as_bytes()),
            )
        }
    };
    let (open, middle, close) = frame_parts(ok, form);
    let with_meta = ok || form == Form::Envelope;
    let fixed = Counts::of(open.as_bytes())
        + body_counts
        + Counts::of(middle.as_bytes())
        + Counts::of(close.as_bytes());

    let mut meta_json = String::new();
    if with_meta {
        meta.tokens_estimated = 0;
        let zero = meta_zero.unwrap_or_else(|| serialize_meta(meta));
        meta.tokens_estimated = tokens_of(fixed + Counts::of(zero.as_bytes()));
        meta_json = with_tokens(zero, meta);
    }

    let mut out = String::with_capacity(open.len() + body.len() + meta_json.len() + 16);
    out.push_str(open);
    out.push_str(body);
    if with_meta {
        out.push_str(middle);
        out.push_str(&meta_json);
    }
    out.push_str(close);
    out
}

/// `data` as compact JSON, unless it is longer than `budget` bytes: then
/// `None`, as soon as that is known (a text has at least as many units as
/// bytes, so it could not fit), and an answer far over the budget costs a
/// budget's worth of serializing here, not its whole size.
fn serialize_within(data: &Value, budget: u64) -> Option<String> {
    struct Capped {
        buf: Vec<u8>,
        cap: usize,
    }
    impl std::io::Write for Capped {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            if self.buf.len() + bytes.len() > self.cap {
                return Err(std::io::ErrorKind::FileTooLarge.into());
            }
            self.buf.extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let cap = usize::try_from(budget).unwrap_or(usize::MAX);
    let mut out = Capped {
        buf: Vec::with_capacity(cap.min(4096)),
        cap,
    };
    serde_json::to_writer(&mut out, data).ok()?;
    String::from_utf8(out.buf).ok()
}

/// The meta as `serde_json::to_string` writes it, each key written as the
/// literal it is. Its flattened `extra` made serde write the meta as a map,
/// whose every key went through the string escaper: 3,000 instructions of
/// every answer on every surface, a twentieth of a cached REST read.
fn serialize_meta(meta: &Meta) -> String {
    let Meta {
        api_version,
        tool,
        layer,
        request_id,
        runtime_ms,
        warnings,
        tokens_estimated,
        truncated,
        trimmed,
        envelope_unshrinkable,
        extra,
    } = meta;
    let mut out = Vec::with_capacity(256);
    let mut field = |key: &str, value: &dyn erased_json::Write| {
        out.push(if out.is_empty() { b'{' } else { b',' });
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
        value.write(&mut out);
    };
    field("api_version", api_version);
    field("tool", tool);
    field("layer", layer);
    field("request_id", request_id);
    field("runtime_ms", runtime_ms);
    field("warnings", warnings);
    field("tokens_estimated", tokens_estimated);
    field("truncated", truncated);
    field("trimmed", trimmed);
    if let Some(unshrinkable) = envelope_unshrinkable {
        field("envelope_unshrinkable", unshrinkable);
    }
    for (key, value) in extra {
        out.push(b',');
        erased_json::Write::write(key, &mut out);
        out.push(b':');
        erased_json::Write::write(value, &mut out);
    }
    out.push(b'}');
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// A value serde_json writes, behind a reference of one type.
mod erased_json {
    pub trait Write {
        fn write(&self, out: &mut Vec<u8>);
    }

    impl<T: serde::Serialize> Write for T {
        fn write(&self, out: &mut Vec<u8>) {
            serde_json::to_writer(out, self).expect("meta values always serialize");
        }
    }
}

/// The token estimate of a text whose counts are `base` with the estimate
/// written as one digit. With `t` in its place, the text has `digits(t) - 1`
/// more ASCII bytes. f(t) is non-decreasing in t and starts at t = 0, so the
/// sequence climbs to its fixpoint; the digits of t change at most a few
/// times.
fn tokens_of(base: Counts) -> u64 {
    let mut tokens = 0;
    for _ in 0..32 {
        let next = Counts {
            ascii: base.ascii + digits(tokens) - 1,
            non_ascii: base.non_ascii,
        }
        .tokens();
        if next == tokens {
            break;
        }
        tokens = next;
    }
    tokens
}

/// Decimal digits of `n`.
fn digits(n: u64) -> u64 {
    u64::from(n.checked_ilog10().unwrap_or(0)) + 1
}

/// The meta serialized with `tokens_estimated` 0 (`zero`), with the meta's
/// own number written in instead. The field is found by its key and the one
/// after it: a string value cannot hold that text unescaped.
fn with_tokens(mut zero: String, meta: &Meta) -> String {
    // Built once: making a searcher costs more than searching a meta.
    static FINDER: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(AROUND_TOKENS));
    let Some(at) = FINDER.find(zero.as_bytes()) else {
        return serialize_meta(meta);
    };
    let digit = at + TOKENS_KEY.len();
    zero.replace_range(digit..digit + 1, &meta.tokens_estimated.to_string());
    zero
}

/// ASCII bytes and non-ASCII chars of a UTF-8 text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    ascii: u64,
    non_ascii: u64,
}

impl Counts {
    /// One pass, in blocks of 255 bytes counted in `u8` lanes so that it vectorizes
    /// (this scan runs over every byte of every payload).
    fn of(bytes: &[u8]) -> Self {
        let (mut ascii, mut lead) = (0u64, 0u64);
        for block in bytes.chunks(255) {
            let (mut a, mut l) = (0u8, 0u8);
            for &b in block {
                a += u8::from(b < 0x80);
                l += u8::from(b >= 0xC0);
            }
            ascii += u64::from(a);
            lead += u64::from(l);
        }
        Self {
            ascii,
            non_ascii: lead,
        }
    }

    fn tokens(self) -> u64 {
        self.ascii.div_ceil(4) + self.non_ascii
    }

    fn units(self) -> u64 {
        self.ascii + 4 * self.non_ascii
    }
}

impl std::ops::Add for Counts {
    type Output = Counts;
    fn add(self, other: Counts) -> Counts {
        Counts {
            ascii: self.ascii + other.ascii,
            non_ascii: self.non_ascii + other.non_ascii,
        }
    }
}

/// Units of a UTF-8 text: ascii bytes + 4 per non-ASCII char.
fn units(bytes: &[u8]) -> u64 {
    Counts::of(bytes).units()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{Trim, TrimKind};

    #[test]
    fn the_meta_is_written_as_serde_writes_it() {
        let plain = Meta::new("task_get", "tasks", "01JEXAMPLE");
        let mut full = Meta::new("task_list", "ta\"sks", "id with \\ and \u{7}");
        full.runtime_ms = 0.123_456_7;
        full.warnings = vec!["one".into(), "twö".into()];
        full.tokens_estimated = 12_345;
        full.truncated = true;
        full.trimmed = vec![Trim {
            path: "/items".into(),
            kind: TrimKind::List,
            from: 40,
            to: 3,
        }];
        full.envelope_unshrinkable = Some(true);
        full.contribute("next_cursor", Value::from("abc"));
        full.contribute(
            "total",
            serde_json::json!({"exact": false, "at_least": 100}),
        );
        let mut odd = plain.clone();
        odd.runtime_ms = f64::NAN;
        odd.envelope_unshrinkable = Some(false);
        for meta in [plain, full, odd] {
            assert_eq!(serialize_meta(&meta), serde_json::to_string(&meta).unwrap());
        }
    }

    /// A prerendered answer is, byte for byte, what `render` writes of the
    /// same success with that answer's request id and runtime, whatever the
    /// data, the meta around them and the digits of its token estimate.
    #[test]
    fn a_prerendered_answer_is_what_render_writes() {
        let plain = Meta::new("task_get", "tasks", "made by the call");
        let mut full = Meta::new("task_list", "ta\"sks", "made by the call");
        full.warnings = vec!["one".into(), "twö".into()];
        full.contribute("next_cursor", Value::from("abc"));
        full.contribute("total", serde_json::json!({"exact": true, "count": 2}));
        // Budget fields are the render's own, whatever the meta held.
        full.tokens_estimated = 7;
        full.truncated = true;
        // Estimates of two digits and of three (the data's 150 to 260 bytes
        // cross 100 tokens).
        let data = (0..64)
            .chain(150..260)
            .map(|n| Value::String("x".repeat(n)))
            .chain([
                Value::Null,
                serde_json::json!({"id": "abc", "title": "Ünïcode ✓ \"quoted\"", "tags": []}),
            ]);
        for data in data {
            for meta in [&plain, &full] {
                let prerendered = Prerendered::new(&data, meta).expect("a meta comes apart");
                for (request_id, runtime_ms) in [
                    ("01JEXAMPLE", 0.123_456_7),
                    ("", 0.0),
                    ("id with \\ and \u{7} and ü", 12_345.5),
                    ("r", f64::NAN),
                ] {
                    let (head, rest) = prerendered.answer(request_id, runtime_ms);
                    let mut meta = meta.clone();
                    meta.request_id = request_id.into();
                    meta.runtime_ms = runtime_ms;
                    let rendered =
                        render_with_limit(Envelope::success(data.clone(), meta), None, Form::Rest);
                    assert_eq!(
                        String::from_utf8([&head[..], &rest].concat()).unwrap(),
                        rendered
                    );
                }
                assert_eq!(prerendered.tool(), meta.tool);
                let json = serde_json::to_string(&data).unwrap();
                assert_eq!(prerendered.digest(), digest(&json));
            }
        }
    }
}
