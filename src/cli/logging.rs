//! The process's log: which lines are kept (`CAIRN_LOG`), their shape
//! (`--log-format`) and where they go (stderr, through [`LogSink`]). Both
//! shapes are tracing-subscriber's own `fmt` formats, set up here only.

use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, filter::Targets};

use super::log_sink::LogSink;

/// The shape of log lines (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    // tracing-subscriber's full text format, with thread names; coloured on
    // a terminal.
    Text,
    // One JSON object per line: the event's fields at the top level and
    // `spans` (outermost first: `http` with the request id, `tool` with the
    // tool and request id), so a store's line carries the request that
    // caused it.
    Json,
}

/// Logs go to stderr, always: stdout carries envelopes and protocol frames only.
pub fn init(format: LogFormat) {
    let (fixed, by_span) = filter(std::env::var("CAIRN_LOG").ok().as_deref());
    let logged = tracing_subscriber::registry().with(fixed).with(by_span);
    let lines = tracing_subscriber::fmt::layer()
        .with_writer(LogSink::stderr())
        .with_thread_names(true);
    let _ = match format {
        LogFormat::Text => logged
            .with(lines.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())))
            .try_init(),
        LogFormat::Json => logged
            .with(
                lines
                    .json()
                    .flatten_event(true)
                    .with_current_span(false)
                    .with_span_list(true),
            )
            .try_init(),
    };
}

/// The filter `CAIRN_LOG` asks for (`info` when unset or invalid), in one of
/// two forms. Directives by target and level only (`info`,
/// `cairn=debug,hyper=warn`) decide once per call site, as a [`Targets`];
/// `EnvFilter` would still take a lock shared by every worker on each
/// span's creation, entry, exit and close, several times a request, in
/// case a directive names the span. Only directives that do (`[http]=debug`,
/// `cairn[tool{name}]=trace`), and an empty `CAIRN_LOG` (which `EnvFilter`
/// reads as errors only), get an `EnvFilter`.
fn filter(directives: Option<&str>) -> (Option<Targets>, Option<EnvFilter>) {
    let directives = directives
        .filter(|d| EnvFilter::builder().parse(d).is_ok())
        .unwrap_or("info");
    if directives.trim().is_empty() || directives.contains('[') {
        return (None, Some(EnvFilter::new(directives)));
    }
    match directives.parse() {
        Ok(targets) => (Some(targets), None),
        Err(_) => (None, Some(EnvFilter::new(directives))),
    }
}

#[cfg(test)]
mod tests {
    use tracing::Level;

    use super::filter;

    #[test]
    fn directives_by_target_and_level_are_decided_per_call_site() {
        let (fixed, by_span) = filter(Some("warn,cairn::request=debug,hyper=off"));
        let fixed = fixed.expect("a static filter");
        assert!(by_span.is_none());
        assert!(fixed.would_enable("cairn::request", &Level::DEBUG));
        assert!(!fixed.would_enable("cairn::store", &Level::INFO));
        assert!(fixed.would_enable("cairn::store", &Level::WARN));
        assert!(!fixed.would_enable("hyper::proto", &Level::ERROR));
    }

    #[test]
    fn unset_or_invalid_is_info() {
        for directives in [None, Some("cairn=loud"), Some("a=b=c"), Some(" ")] {
            let (fixed, by_span) = filter(directives);
            let fixed = fixed.expect("a static filter");
            assert!(by_span.is_none(), "{directives:?}");
            assert!(fixed.would_enable("cairn::request", &Level::INFO));
            assert!(!fixed.would_enable("cairn::request", &Level::DEBUG));
        }
    }

    #[test]
    fn directives_naming_a_span_and_an_empty_one_keep_env_filter() {
        for directives in ["[http]=debug", "cairn[tool{name}]=trace", ""] {
            let (fixed, by_span) = filter(Some(directives));
            assert!(fixed.is_none(), "{directives:?}");
            assert!(by_span.is_some(), "{directives:?}");
        }
    }
}
