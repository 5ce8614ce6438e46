//! The text log, written without the styling machinery when the output has
//! no ANSI colours: [`TextFormat`] for the line, [`TextFields`] for fields.
//!
//! tracing-subscriber's `Full` format and `DefaultFields` paint every part of
//! a line (level, span names, field names, `=`, `:`) with a style even when
//! the style is plain, a `Display` and a `write!` each; they write the
//! timestamp with seven padded `write!`s and a string value through `str`'s
//! `Debug`, a character at a time. Per call that was 12,000 of the 157,000
//! instructions of a `GET /api/v1/tasks/{id}` and 24,000 of the 180,000 of
//! an MCP `task_get` over stdio (BENCHMARKS.md).
//!
//! Both types here write the same bytes with plain string writes: a string
//! that needs no escaping is copied between its quotes, any other value is
//! written with its `Debug`; the message with its terminal controls escaped
//! as tracing-subscriber escapes them. Whatever else the originals treat
//! specially is handed to them: a coloured output, an event from the `log`
//! crate (its real target and level are in its fields), errors and their
//! sources, `r#` names.

use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicUsize, Ordering};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::field::{RecordFields, VisitOutput};
use tracing_subscriber::fmt::format::{DefaultVisitor, Format, Full, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

use crate::store::model::TimeText;

/// `Format<Full>` with thread names, byte for byte, without its cost for
/// plain output.
#[derive(Debug, Clone)]
pub struct TextFormat {
    full: Format<Full>,
}

impl Default for TextFormat {
    fn default() -> Self {
        TextFormat {
            full: Format::default().with_thread_names(true),
        }
    }
}

impl<S, N> FormatEvent<S, N> for TextFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        let from_log_crate = meta.fields().field("log.target").is_some();
        let timestamp = match TimeText::now() {
            Some(timestamp) if !writer.has_ansi_escapes() && !from_log_crate => timestamp,
            _ => return self.full.format_event(ctx, writer, event),
        };
        writer.write_str(timestamp.as_str())?;
        writer.write_char(' ')?;
        writer.write_str(level(meta.level()))?;
        writer.write_char(' ')?;
        if let Some(name) = std::thread::current().name() {
            write_thread_name(&mut writer, name)?;
            writer.write_char(' ')?;
        } else {
            write!(writer, "{:0>2?} ", std::thread::current().id())?;
        }
        if let Some(scope) = ctx.event_scope() {
            let mut seen = false;
            for span in scope.from_root() {
                seen = true;
                writer.write_str(span.metadata().name())?;
                if let Some(fields) = span.extensions().get::<FormattedFields<N>>()
                    && !fields.is_empty()
                {
                    writer.write_char('{')?;
                    writer.write_str(fields)?;
                    writer.write_char('}')?;
                }
                writer.write_char(':')?;
            }
            if seen {
                writer.write_char(' ')?;
            }
        }
        writer.write_str(meta.target())?;
        writer.write_str(": ")?;
        ctx.format_fields(writer.by_ref(), event)?;
        writer.write_char('\n')
    }
}

/// `Full`'s level column.
fn level(level: &Level) -> &'static str {
    match *level {
        Level::TRACE => "TRACE",
        Level::DEBUG => "DEBUG",
        Level::INFO => " INFO",
        Level::WARN => " WARN",
        Level::ERROR => "ERROR",
    }
}

/// `Full`'s thread column: right-aligned to the longest name seen so far.
fn write_thread_name(writer: &mut Writer<'_>, name: &str) -> fmt::Result {
    static LONGEST: AtomicUsize = AtomicUsize::new(0);
    let longest = LONGEST
        .fetch_max(name.len(), Ordering::Relaxed)
        .max(name.len());
    for _ in name.len()..longest {
        writer.write_char(' ')?;
    }
    writer.write_str(name)
}

/// `DefaultFields`, byte for byte, without its cost for plain output.
#[derive(Debug, Default, Clone, Copy)]
pub struct TextFields;

impl<'writer> FormatFields<'writer> for TextFields {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'writer>, fields: R) -> fmt::Result {
        let visit = |out: &mut String| {
            let mut visitor = TextVisitor {
                writer,
                out,
                is_empty: true,
                result: Ok(()),
            };
            fields.record(&mut visitor);
            visitor.flush();
            visitor.result
        };
        SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
            Ok(mut out) => {
                out.clear();
                let written = visit(&mut out);
                // The room a field of unusual size took is not kept for the
                // thread's life.
                if out.capacity() > SCRATCH_KEPT {
                    *out = String::new();
                }
                written
            }
            // A line written while another's fields are: a field's `Debug`
            // that logs through a dispatcher of its own.
            Err(_) => visit(&mut String::new()),
        })
    }
}

/// The most room the scratch string keeps between lines, in bytes.
const SCRATCH_KEPT: usize = 16 << 10;

thread_local! {
    /// The plain fields of a line or a span, written here and handed to the
    /// output in one piece: one string write where there were six calls
    /// through `dyn fmt::Write` a field, and a span's fields grow their
    /// string once. Kept for the thread's next line.
    static SCRATCH: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

struct TextVisitor<'a, 'b> {
    writer: Writer<'a>,
    /// What is written but not yet handed to `writer`.
    out: &'b mut String,
    is_empty: bool,
    result: fmt::Result,
}

impl TextVisitor<'_, '_> {
    /// Whether `DefaultVisitor` must write this field: it styles it, or
    /// treats its name or kind specially.
    fn is_special(&self, name: &str) -> bool {
        self.writer.has_ansi_escapes()
            || name == "message"
            || name.starts_with("r#")
            || name.starts_with("log.")
    }

    /// Hands what is written so far to the output.
    fn flush(&mut self) {
        if !self.out.is_empty() {
            self.result = std::mem::replace(&mut self.result, Ok(()))
                .and_then(|()| self.writer.write_str(self.out));
            self.out.clear();
        }
    }

    /// Writes the separator and `name=`, as `DefaultVisitor` does unstyled.
    fn name(&mut self, name: &str) {
        if !std::mem::take(&mut self.is_empty) {
            self.out.push(' ');
        }
        self.out.push_str(name);
        self.out.push('=');
    }

    /// Hands one field to tracing-subscriber's own visitor, which writes
    /// every field but the `log` crate's metadata.
    fn delegate(&mut self, field: &Field, record: impl FnOnce(&mut DefaultVisitor<'_>)) {
        self.flush();
        if self.result.is_err() {
            return;
        }
        let mut visitor = DefaultVisitor::new(self.writer.by_ref(), self.is_empty);
        record(&mut visitor);
        self.result = visitor.finish();
        self.is_empty &= field.name().starts_with("log.");
    }

    /// The message as `DefaultVisitor` writes it, its terminal controls
    /// escaped, in runs between them rather than a character at a time.
    fn record_message(&mut self, write: impl FnOnce(&mut dyn fmt::Write) -> fmt::Result) {
        if !std::mem::take(&mut self.is_empty) {
            self.out.push(' ');
        }
        self.result = if self.writer.sanitizes_ansi_escapes() {
            write(&mut Escaping(&mut *self.out))
        } else {
            write(self.out)
        };
    }

    /// An integer as its `Debug` writes it (its decimal digits), without the
    /// formatting machinery.
    fn record_integer(
        &mut self,
        field: &Field,
        value: impl itoa::Integer,
        record: impl FnOnce(&mut DefaultVisitor<'_>, &Field),
    ) {
        if self.result.is_err() {
            return;
        }
        if self.is_special(field.name()) {
            return self.delegate(field, |v| record(v, field));
        }
        self.name(field.name());
        self.out.push_str(itoa::Buffer::new().format(value));
    }
}

impl Visit for TextVisitor<'_, '_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if self.result.is_err() {
            return;
        }
        if field.name() == "message" && !self.writer.has_ansi_escapes() {
            return self.record_message(|out| out.write_str(value));
        }
        if self.is_special(field.name()) || !needs_no_escape(value) {
            return self.delegate(field, |v| v.record_str(field, value));
        }
        self.name(field.name());
        self.out.push('"');
        self.out.push_str(value);
        self.out.push('"');
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.record_integer(field, value, |v, f| v.record_u64(f, value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.record_integer(field, value, |v, f| v.record_i64(f, value));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        if self.result.is_err() {
            return;
        }
        match Thousandths::of(value) {
            Some(exact) if !self.is_special(field.name()) => {
                self.name(field.name());
                exact.write(self.out);
            }
            _ => self.record_debug(field, &value),
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        if self.result.is_err() {
            return;
        }
        self.delegate(field, |v| v.record_error(field, value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.result.is_err() {
            return;
        }
        if field.name() == "message" && !self.writer.has_ansi_escapes() {
            return self.record_message(|out| write!(out, "{value:?}"));
        }
        if self.is_special(field.name()) {
            return self.delegate(field, |v| v.record_debug(field, value));
        }
        self.name(field.name());
        self.result = write!(self.out, "{value:?}");
    }
}

/// A positive (or +0) `f64` that is exactly the double nearest a number of
/// thousandths below 10^15 (a latency in milliseconds read to the
/// microsecond, say), which its `Debug` writes as that decimal: a decimal
/// of at most 15 significant digits is the only one of so few digits that
/// reads back as its double (`f64::DIGITS`), so it is the shortest, which
/// is what `Debug` writes, in decimal notation from 1e-4 up to 1e16, with
/// `.0` when it has no fraction. Written with integer arithmetic instead
/// of the shortest-digits search.
struct Thousandths(u64);

impl Thousandths {
    fn of(value: f64) -> Option<Self> {
        let n = (value * 1000.0).round();
        let exact = value.is_sign_positive() && (0.0..1e15).contains(&n) && n / 1000.0 == value;
        exact.then_some(Thousandths(n as u64))
    }

    fn write(&self, out: &mut String) {
        let (whole, fraction) = (self.0 / 1000, self.0 % 1000);
        out.push_str(itoa::Buffer::new().format(whole));
        out.push('.');
        if fraction == 0 {
            out.push('0');
            return;
        }
        let digits = [fraction / 100, fraction / 10 % 10, fraction % 10];
        let shown = if digits[2] != 0 {
            3
        } else if digits[1] != 0 {
            2
        } else {
            1
        };
        for digit in &digits[..shown] {
            out.push(char::from(b'0' + *digit as u8));
        }
    }
}

/// tracing-subscriber's escaping of a message: ESC, BEL, BS, FF and DEL as
/// `\x..`, C1 controls as `\u{..}`.
struct Escaping<W>(W);

impl<W: fmt::Write> fmt::Write for Escaping<W> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        let mut clean = 0;
        for (at, ch) in text.char_indices() {
            let escape = match ch {
                '\x1b' => Some("\\x1b"),
                '\x07' => Some("\\x07"),
                '\x08' => Some("\\x08"),
                '\x0c' => Some("\\x0c"),
                '\x7f' => Some("\\x7f"),
                '\u{80}'..='\u{9f}' => None,
                _ => continue,
            };
            self.0.write_str(&text[clean..at])?;
            match escape {
                Some(escape) => self.0.write_str(escape)?,
                None => write!(self.0, "\\u{{{:x}}}", u32::from(ch))?,
            }
            clean = at + ch.len_utf8();
        }
        self.0.write_str(&text[clean..])
    }
}

/// Whether `str`'s `Debug` would write `value` unchanged between quotes:
/// printable ASCII, no quote, no backslash. Every byte is tested, with no
/// early exit, so that the loop vectorizes (the values are short, and
/// almost all of them pass).
fn needs_no_escape(value: &str) -> bool {
    value.bytes().fold(true, |plain, b| {
        plain & (b' '..=b'~').contains(&b) & (b != b'"') & (b != b'\\')
    })
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::fmt::MakeWriter;

    use super::*;

    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Buffer {
        type Writer = Buffer;
        fn make_writer(&'a self) -> Buffer {
            self.clone()
        }
    }

    #[derive(Debug)]
    struct Outer;
    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the store is gone")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&Inner)
        }
    }
    #[derive(Debug)]
    struct Inner;
    impl fmt::Display for Inner {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("disk \"full\"")
        }
    }
    impl std::error::Error for Inner {}

    /// A field whose `Debug` logs a line of its own while its line is
    /// written (tracing drops that line: a dispatcher is not entered twice).
    struct Chatty;
    impl fmt::Debug for Chatty {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            tracing::info!(inner = "x", "logged while a field is written");
            f.write_str("chatty")
        }
    }

    /// Lines of every kind of field, in spans and out of them.
    fn log_everything() {
        let span = tracing::info_span!(
            "http",
            method = %"GET",
            path = "/api/v1/tasks/{id}",
            request_id = "01JEXAMPLE",
            token = tracing::field::Empty,
        );
        let _entered = span.enter();
        span.record("token", "ci-bot");
        let tool = tracing::info_span!("tool", tool = "task_get", r#type = "read");
        let _in_tool = tool.enter();
        tracing::info!(
            request_id = "01JEXAMPLE",
            status = 200u16,
            latency_ms = 0.25,
            ok = true,
            delta = -3i64,
            most = u64::MAX,
            least = i64::MIN,
            tiny = 1e-7,
            huge = 1.5e20,
            odd = 1234.5678,
            whole = 3.0,
            zero = 0.0,
            micros = 12.345,
            "answered"
        );
        tracing::warn!(
            quoted = "say \"hi\"\\",
            tab = "a\tb",
            accent = "café",
            empty = ""
        );
        tracing::error!(
            error = &Outer as &(dyn std::error::Error + 'static),
            "cannot open"
        );
        tracing::info!(
            "a message with \x1b[31m a terminal escape, \x07\x08\x0c\x7f, a tab\t and \u{9b} a C1 control"
        );
        tracing::info!(message = "a message field as a str", after = "x");
        tracing::info!(
            message = "a str message with \x1b[1m an escape and \u{9b}",
            n = 1
        );
        tracing::info!(before = "y", chatty = ?Chatty, after = "z");
        tracing::debug!(r#loop = 3, list = ?["a", "b"], "{} formatted", 2);
        drop(_in_tool);
        tracing::info!(span_only = "outside the tool span");
    }

    /// The lines `log_everything` writes, through our format and fields or
    /// tracing-subscriber's own, each timestamp checked and then masked.
    fn capture(ansi: bool, ours: bool) -> String {
        let buffer = Buffer::default();
        let builder = tracing_subscriber::fmt()
            .with_writer(buffer.clone())
            .with_max_level(tracing::Level::TRACE)
            .with_thread_names(true)
            .with_ansi(ansi);
        let dispatch = if ours {
            let format = TextFormat::default();
            tracing::Dispatch::new(builder.fmt_fields(TextFields).event_format(format).finish())
        } else {
            tracing::Dispatch::new(builder.finish())
        };
        // A named thread as the runtime's are, then one without a name.
        let on = |name: Option<&str>, dispatch: tracing::Dispatch, log: fn()| {
            let thread = match name {
                Some(name) => std::thread::Builder::new().name(name.into()),
                None => std::thread::Builder::new(),
            };
            let thread = thread.spawn(move || tracing::dispatcher::with_default(&dispatch, log));
            thread.unwrap().join().unwrap();
        };
        on(
            Some("tokio-runtime-worker"),
            dispatch.clone(),
            log_everything,
        );
        on(None, dispatch, || tracing::info!(unnamed = true));
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .map(|line| {
                // Coloured, the timestamp comes after its style's escape.
                let end = line.find('Z').expect("a timestamp") + 1;
                let (before, rest) = line.split_at(end);
                let (before, stamp) = before.split_at(end.saturating_sub(27));
                assert!(
                    chrono::DateTime::parse_from_rfc3339(stamp).is_ok(),
                    "not a timestamp: {stamp:?} in {line:?}"
                );
                format!("{before}<time>{}\n", without_thread_id(rest))
            })
            .collect()
    }

    /// A thread's id depends on how many threads the test process made.
    fn without_thread_id(line: &str) -> String {
        match line.split_once("ThreadId(") {
            Some((before, after)) => {
                let after = after.trim_start_matches(|c: char| c.is_ascii_digit());
                format!("{before}ThreadId(N{after}")
            }
            None => line.to_owned(),
        }
    }

    #[test]
    fn writes_what_full_and_default_fields_write() {
        let ours = capture(false, true);
        assert_eq!(ours, capture(false, false));
        // The cases worth naming are there, so the comparison covers them.
        for expected in [
            r#"http{method=GET path="/api/v1/tasks/{id}" request_id="01JEXAMPLE" token="ci-bot"}:tool{tool="task_get" type="read"}:"#,
            r#"status=200 latency_ms=0.25 ok=true delta=-3"#,
            r#"odd=1234.5678 whole=3.0 zero=0.0 micros=12.345"#,
            r#"quoted="say \"hi\"\\" tab="a\tb" accent="café" empty="""#,
            r#"before="y" chatty=chatty after="z""#,
            "error.sources=",
            r"\x1b[31m",
            " INFO tokio-runtime-worker http{",
            "DEBUG tokio-runtime-worker http{",
            "log_text::tests: ",
            " INFO ThreadId(",
        ] {
            assert!(ours.contains(expected), "{expected} not in {ours}");
        }
    }

    #[test]
    fn thousandths_are_written_as_debug_writes_them() {
        let written = |value: f64| {
            Thousandths::of(value).map(|exact| {
                let mut out = String::new();
                exact.write(&mut out);
                out
            })
        };
        // Every latency to the microsecond up to 5 s, then samples of each
        // order of magnitude up to the largest taken.
        let counts = (0..5_000_000u64)
            .chain((0..=15).flat_map(|p| (0..2_000u64).map(move |i| 10u64.pow(p) + i * 7_919)))
            .filter(|n| *n < 1_000_000_000_000_000);
        for n in counts {
            let value = n as f64 / 1000.0;
            let exact = written(value).unwrap_or_else(|| panic!("{n} thousandths not taken"));
            assert_eq!(exact, format!("{value:?}"), "{n} thousandths");
        }
        // What is not exactly some thousandths goes to `Debug`.
        for value in [
            0.0005,
            1234.5678,
            1e-7,
            1.5e20,
            -1.0,
            -0.0,
            0.1 + 0.2,
            f64::NAN,
            1e15,
        ] {
            assert_eq!(written(value), None, "{value:?}");
        }
    }

    #[test]
    fn a_line_of_unusual_size_leaves_no_room_behind() {
        let buffer = Buffer::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(buffer.clone())
            .with_ansi(false)
            .fmt_fields(TextFields)
            .event_format(TextFormat::default())
            .finish();
        let big = "x".repeat(4 * SCRATCH_KEPT);
        let room = || SCRATCH.with(|scratch| scratch.borrow().capacity());
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(small = "y");
            let kept = room();
            assert!(kept > 0 && kept <= SCRATCH_KEPT, "{kept}");
            tracing::info!(big = big.as_str());
            assert!(room() <= SCRATCH_KEPT, "{}", room());
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert!(
            text.contains(&format!("big=\"{big}\"")),
            "the line is whole"
        );
    }

    #[test]
    fn leaves_coloured_output_to_full_and_default_fields() {
        let ours = capture(true, true);
        assert!(ours.contains("\x1b["), "no colours in {ours}");
        assert_eq!(ours, capture(true, false));
    }
}
