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
//! written with its `Debug`. Whatever the originals treat specially is
//! handed to them: a coloured output, an event from the `log` crate (its
//! real target and level are in its fields), the message (its terminal
//! controls are escaped), errors and their sources, `r#` names.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::field::{RecordFields, VisitOutput};
use tracing_subscriber::fmt::format::{DefaultVisitor, Format, Full, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

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
        let timestamp = match Timestamp::now() {
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

/// `SystemTime`'s timestamp as `Full` writes it: RFC 3339 in UTC with
/// microseconds, `2026-12-03T16:27:42.123456Z`.
struct Timestamp([u8; 27]);

impl Timestamp {
    /// Now; `None` before 1970 or after 9999, which `Full` writes itself.
    fn now() -> Option<Timestamp> {
        Timestamp::at(SystemTime::now())
    }

    fn at(time: SystemTime) -> Option<Timestamp> {
        let since = time.duration_since(UNIX_EPOCH).ok()?;
        let seconds = since.as_secs();
        let (year, month, day) = civil_from_days(seconds / 86_400);
        if year > 9999 {
            return None;
        }
        let of_day = seconds % 86_400;
        let mut out = *b"0000-00-00T00:00:00.000000Z";
        digits(&mut out[0..4], year);
        digits(&mut out[5..7], month);
        digits(&mut out[8..10], day);
        digits(&mut out[11..13], of_day / 3600);
        digits(&mut out[14..16], of_day / 60 % 60);
        digits(&mut out[17..19], of_day % 60);
        digits(&mut out[20..26], u64::from(since.subsec_micros()));
        Some(Timestamp(out))
    }

    fn as_str(&self) -> &str {
        // Only ASCII digits were written into an ASCII template.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// Writes `value` as decimal digits filling `out`, zero-padded on the left.
fn digits(out: &mut [u8], mut value: u64) {
    for place in out.iter_mut().rev() {
        *place = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

/// The proleptic Gregorian (year, month, day) of a day counted from
/// 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// `DefaultFields`, byte for byte, without its cost for plain output.
#[derive(Debug, Default, Clone, Copy)]
pub struct TextFields;

impl<'writer> FormatFields<'writer> for TextFields {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'writer>, fields: R) -> fmt::Result {
        let mut visitor = TextVisitor {
            writer,
            is_empty: true,
            result: Ok(()),
        };
        fields.record(&mut visitor);
        visitor.result
    }
}

struct TextVisitor<'a> {
    writer: Writer<'a>,
    is_empty: bool,
    result: fmt::Result,
}

impl TextVisitor<'_> {
    /// Whether `DefaultVisitor` must write this field: it styles it, or
    /// treats its name or kind specially.
    fn is_special(&self, name: &str) -> bool {
        self.writer.has_ansi_escapes()
            || name == "message"
            || name.starts_with("r#")
            || name.starts_with("log.")
    }

    /// Writes the separator and `name=`, as `DefaultVisitor` does unstyled.
    fn name(&mut self, name: &str) -> fmt::Result {
        if !std::mem::take(&mut self.is_empty) {
            self.writer.write_char(' ')?;
        }
        self.writer.write_str(name)?;
        self.writer.write_char('=')
    }

    /// Hands one field to tracing-subscriber's own visitor, which writes
    /// every field but the `log` crate's metadata.
    fn delegate(&mut self, field: &Field, record: impl FnOnce(&mut DefaultVisitor<'_>)) {
        let mut visitor = DefaultVisitor::new(self.writer.by_ref(), self.is_empty);
        record(&mut visitor);
        self.result = visitor.finish();
        self.is_empty &= field.name().starts_with("log.");
    }
}

impl Visit for TextVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if self.result.is_err() {
            return;
        }
        if self.is_special(field.name()) || !needs_no_escape(value) {
            return self.delegate(field, |v| v.record_str(field, value));
        }
        self.result = self
            .name(field.name())
            .and_then(|()| self.writer.write_char('"'))
            .and_then(|()| self.writer.write_str(value))
            .and_then(|()| self.writer.write_char('"'));
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
        if self.is_special(field.name()) {
            return self.delegate(field, |v| v.record_debug(field, value));
        }
        self.result = self
            .name(field.name())
            .and_then(|()| write!(self.writer, "{value:?}"));
    }
}

/// Whether `str`'s `Debug` would write `value` unchanged between quotes:
/// printable ASCII, no quote, no backslash.
fn needs_no_escape(value: &str) -> bool {
    value
        .bytes()
        .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\')
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
        tracing::info!("a message with \x1b[31m a terminal escape and \u{9b} a C1 control");
        tracing::info!(message = "a message field as a str", after = "x");
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
            r#"quoted="say \"hi\"\\" tab="a\tb" accent="café" empty="""#,
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
    fn leaves_coloured_output_to_full_and_default_fields() {
        let ours = capture(true, true);
        assert!(ours.contains("\x1b["), "no colours in {ours}");
        assert_eq!(ours, capture(true, false));
    }

    #[test]
    fn timestamps_are_rfc_3339_with_microseconds() {
        for seconds in [
            0,
            951_782_400,
            1_764_777_662,
            4_107_542_399,
            253_402_300_799,
        ] {
            for micros in [0, 1, 999_999] {
                let time = UNIX_EPOCH + std::time::Duration::new(seconds, micros * 1000);
                let expected = chrono::DateTime::<chrono::Utc>::from(time)
                    .to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
                assert_eq!(Timestamp::at(time).unwrap().as_str(), expected);
            }
        }
        let beyond = UNIX_EPOCH + std::time::Duration::from_secs(253_402_300_800);
        assert!(
            Timestamp::at(beyond).is_none(),
            "year 10000 is left to Full"
        );
    }
}
