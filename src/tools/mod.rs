//! The tool functions: one plain function per capability, typed input and
//! output, over the store. Knows nothing of HTTP, MCP or the CLI.
//!
//! Surfaces reach tools only through [`Cairn::call`], which applies the module
//! gate, decodes arguments, runs the tool off the async executor, turns panics
//! into `internal_error` and returns an [`Envelope`].

pub mod bounds;
pub mod changes;
pub mod common;
pub mod fields;
pub mod graph;
pub mod idempotency;
pub mod live;
pub mod markdown;
pub mod notes;
pub mod projects;
pub mod registry;
pub mod search;
pub mod sets;
mod store_error;
pub mod system;
pub mod tasks;
pub mod wikilink;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde_json::Value;

use crate::envelope::{Envelope, ErrorCode, Meta, ToolError};
use crate::store::Store;

pub use common::Clock;
use registry::Handler;
pub use registry::{Effect, Module, REGISTRY, ToolDef};

/// Deployment settings the tools honour.
#[derive(Debug, Clone)]
pub struct Config {
    /// Modules switched off: their tools answer `module_disabled`.
    pub disabled_modules: BTreeSet<Module>,
    /// Largest note content accepted, in bytes.
    pub content_limit_bytes: usize,
    /// The time source (tests move it forward to expire claims).
    pub clock: Clock,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            disabled_modules: BTreeSet::new(),
            content_limit_bytes: 1024 * 1024,
            clock: Clock::default(),
        }
    }
}

/// What a tool function gets: the store, the settings, and the call's signal.
pub struct Ctx<'a> {
    pub store: &'a dyn Store,
    pub config: &'a Config,
    pub signal: &'a Signal,
}

/// One step of a long call's progress.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Steps done; increases with every report.
    pub done: u64,
    /// Steps in all, when known.
    pub total: Option<u64>,
    pub message: String,
}

type ProgressSink = Box<dyn Fn(Progress) + Send + Sync>;

/// Between a surface and a long tool: the tool reports its progress (when
/// the caller asked for it) and checks whether the caller gave up, at the
/// points where stopping leaves nothing half done.
#[derive(Default)]
pub struct Signal {
    cancelled: AtomicBool,
    progress: Option<ProgressSink>,
}

impl Signal {
    /// A signal whose reports go to `sink`.
    pub fn reporting(sink: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        Self {
            cancelled: AtomicBool::new(false),
            progress: Some(Box::new(sink)),
        }
    }

    pub fn report(&self, done: u64, total: Option<u64>, message: impl Into<String>) {
        if let Some(sink) = &self.progress {
            sink(Progress {
                done,
                total,
                message: message.into(),
            });
        }
    }

    /// The caller gave up; the tool stops at its next safe point.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }
}

/// The surface a call came through, for metrics and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    Rest,
    Mcp,
    Cli,
}

impl Surface {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Rest => "rest",
            Self::Mcp => "mcp",
            Self::Cli => "cli",
        }
    }
}

/// The application: a store and its settings, shared by every surface.
#[derive(Clone)]
pub struct Cairn {
    /// The project's store.
    store: Arc<dyn Store>,
    config: Arc<Config>,
    surface: Surface,
    /// Every project's store, and the key of the one this handle calls in.
    projects: Arc<projects::Projects>,
    project: &'static str,
}

impl Cairn {
    /// The application as the CLI calls it ([`Cairn::on`] names another surface).
    /// Its calls go to the `default` project (the one `store` holds);
    /// [`Cairn::in_project`] names another.
    pub fn new(store: Arc<dyn Store>, config: Config) -> Self {
        Self {
            projects: Arc::new(projects::Projects::new(store.clone())),
            store,
            config: Arc::new(config),
            surface: Surface::Cli,
            project: crate::store::DEFAULT_PROJECT,
        }
    }

    /// The same application over project `key`: `project_not_found` when
    /// there is none. A project used before answers at once; the first use
    /// opens its store off the async executor.
    pub async fn in_project(&self, key: &str) -> Result<Self, ToolError> {
        if key == self.project {
            return Ok(self.clone());
        }
        if let Some(opened) = self.projects.opened(key) {
            return Ok(self.with_project(opened));
        }
        let (this, wanted) = (self.clone(), key.to_owned());
        tokio::task::spawn_blocking(move || this.in_project_blocking(&wanted))
            .await
            .map_err(|_| ToolError::internal())?
    }

    /// [`Cairn::in_project`] on this thread, which may wait on the store:
    /// not on the async executor.
    pub fn in_project_blocking(&self, key: &str) -> Result<Self, ToolError> {
        if key == self.project {
            return Ok(self.clone());
        }
        Ok(self.with_project(self.projects.open(key)?))
    }

    fn with_project(&self, (project, store): (&'static str, Arc<dyn Store>)) -> Self {
        Self {
            store,
            project,
            ..self.clone()
        }
    }

    /// The key of the project this handle calls in.
    pub fn project(&self) -> &'static str {
        self.project
    }

    /// Every project's store.
    pub fn projects(&self) -> &Arc<projects::Projects> {
        &self.projects
    }

    /// The same application, its calls counted under `surface`.
    pub fn on(&self, surface: Surface) -> Self {
        Self {
            surface,
            ..self.clone()
        }
    }

    pub fn surface(&self) -> Surface {
        self.surface
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Runs the tool `name` with JSON arguments and wraps the outcome in an envelope.
    pub async fn call(&self, name: &str, args: Value, request_id: &str) -> Envelope {
        let Some(def) = registry::find(name) else {
            let meta = Meta::new(name, "", request_id);
            return Envelope::failure(registry::unknown_tool(name), meta);
        };
        self.call_def(def, args, request_id).await
    }

    /// Runs one tool definition (registered or ad hoc): module gate, argument
    /// decoding and the tool itself, inside a span that carries the tool name
    /// and request id; a panic becomes `internal_error`. A point read runs
    /// right here when the store answers it without waiting
    /// ([`crate::store::nowait`]), anything else on the blocking pool.
    pub async fn call_def(&self, def: &ToolDef, args: Value, request_id: &str) -> Envelope {
        let span = tool_span(def, request_id);
        self.call_def_with(def, args, request_id, Arc::default(), span)
            .await
    }

    /// [`Cairn::call_def`] with a signal the surface keeps, for progress
    /// reports and cancellation, and the [`tool_span`] the surface logs its
    /// own lines of the call in (MCP).
    pub async fn call_def_with(
        &self,
        def: &ToolDef,
        args: Value,
        request_id: &str,
        signal: Arc<Signal>,
        span: tracing::Span,
    ) -> Envelope {
        let mut meta = Meta::new(def.name, def.module.layer(), request_id);
        if self.config.disabled_modules.contains(&def.module) {
            return Envelope::failure(def.module.disabled_error(), meta);
        }
        let started = Instant::now();
        let done_here = (def.point_read && self.store.reads_without_waiting())
            .then(|| self.run_here(def, &args, &span, &signal))
            .flatten();
        let ran = match done_here {
            Some(ran) => ran,
            None if def.one_write => {
                let queued = span.clone();
                run_queued(&self.store, self.detached(def, args, span, signal), queued).await
            }
            None => run_blocking(self.detached(def, args, span, signal)).await,
        };
        let elapsed = started.elapsed();
        meta.runtime_ms = elapsed.as_secs_f64() * 1000.0;
        let code = match &ran {
            Ok(Ok(_)) => "ok",
            Ok(Err(error)) => error.code.as_str(),
            Err(_) => ErrorCode::InternalError.as_str(),
        };
        self.count(def.name, code, elapsed);
        match ran {
            Ok(Ok(data)) => Envelope::success(data, meta),
            Ok(Err(error)) => Envelope::failure(error, meta),
            Err(cause) => {
                tracing::error!(
                    tool = def.name,
                    request_id,
                    pid = std::process::id(),
                    cause,
                    "tool panicked"
                );
                Envelope::failure(ToolError::internal(), meta)
            }
        }
    }

    /// Runs the tool on this thread with waiting refused: `None` when the
    /// store would have waited (nothing ran to completion; the caller runs it
    /// again on the blocking pool).
    fn run_here(
        &self,
        def: &ToolDef,
        args: &Value,
        span: &tracing::Span,
        signal: &Signal,
    ) -> Option<Ran> {
        let _entered = span.enter();
        let ctx = self.ctx(signal);
        let attempt =
            || crate::store::nowait::attempt(|| run(def.name, def.handler, &ctx, args.clone()));
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(attempt)) {
            Ok(done) => done.map(Ok),
            Err(payload) => Some(Err(panic_payload_text(payload.as_ref()))),
        }
    }

    /// The call, to run on another thread: in its span, with the
    /// application's handle of its own.
    fn detached(
        &self,
        def: &ToolDef,
        args: Value,
        span: tracing::Span,
        signal: Arc<Signal>,
    ) -> impl FnOnce() -> Result<Value, ToolError> + Send + 'static {
        let this = self.clone();
        let (tool, handler) = (def.name, def.handler);
        let writes = def.effect != Effect::Reads;
        move || {
            let _entered = span.enter();
            if writes {
                this.projects.check_writable(this.project)?;
            }
            run(tool, handler, &this.ctx(&signal), args)
        }
    }

    fn ctx<'a>(&'a self, signal: &'a Signal) -> Ctx<'a> {
        Ctx {
            store: self.store.as_ref(),
            config: &self.config,
            signal,
        }
    }
}

/// The span a tool call runs in: every line logged inside it names the tool
/// and the request (an error-level span, so it is there at any log level).
pub fn tool_span(def: &ToolDef, request_id: &str) -> tracing::Span {
    tracing::error_span!("tool", tool = def.name, request_id)
}

/// A tool's outcome, or the text of its panic.
type Ran = Result<Result<Value, ToolError>, String>;

/// Runs a [`Cairn::detached`] call on the blocking pool.
async fn run_blocking(call: impl FnOnce() -> Result<Value, ToolError> + Send + 'static) -> Ran {
    tokio::task::spawn_blocking(call)
        .await
        .map_err(panic_message)
}

/// Runs a [`Cairn::detached`] call that writes once on the store's writer
/// thread, with the calls queued beside it, and answers after its write's
/// commit; on the blocking pool where the store has no such thread. `span`
/// is the call's, for the commit's log lines.
async fn run_queued(
    store: &Arc<dyn Store>,
    call: impl FnOnce() -> Result<Value, ToolError> + Send + 'static,
    span: tracing::Span,
) -> Ran {
    let (answer, answered) = tokio::sync::oneshot::channel();
    let call: crate::store::WriteCall = Box::new(move || {
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(call))
            .map_err(|payload| panic_payload_text(payload.as_ref()));
        crate::store::Queued {
            answer: Box::new(move |committed| {
                let _ = answer.send(committed.map_or_else(|e| Ok(Err(e.into())), |()| ran));
            }),
            span,
        }
    });
    if let Err(call) = Arc::clone(store).queue_write(call) {
        // No writer thread: the call's write commits before it returns.
        tokio::task::spawn_blocking(move || (call().answer)(Ok(())))
            .await
            .map_err(panic_message)?;
    }
    // The answer is dropped unsent only when the writer thread lost the call.
    answered
        .await
        .unwrap_or_else(|_| Err("the queued call was lost".to_owned()))
}

/// Decodes the arguments and runs the tool; an internal error is logged with
/// the thread it ran on.
fn run(
    tool: &'static str,
    handler: Handler,
    ctx: &Ctx<'_>,
    args: Value,
) -> Result<Value, ToolError> {
    let result = handler(ctx, args);
    if let Err(error) = &result
        && error.code == ErrorCode::InternalError
    {
        tracing::error!(
            tool,
            pid = std::process::id(),
            thread = std::thread::current().name().unwrap_or("unnamed"),
            "tool failed with an internal error"
        );
    }
    result
}

impl Cairn {
    /// Counts one call of `tool` answered with `code` (`ok` or the error
    /// code) after `elapsed`, on this surface.
    pub fn count(&self, tool: &'static str, code: &'static str, elapsed: std::time::Duration) {
        use crate::metrics::{STORE_FAILURES, record_tool_call};
        record_tool_call(tool, self.surface.as_str(), code, self.project, elapsed);
        if code == ErrorCode::StoreBusy.as_str() || code == ErrorCode::StoreUnavailable.as_str() {
            metrics::counter!(STORE_FAILURES, "code" => code).increment(1);
        }
    }
}

fn panic_message(error: tokio::task::JoinError) -> String {
    match error.try_into_panic() {
        Ok(payload) => panic_payload_text(payload.as_ref()),
        Err(e) => e.to_string(),
    }
}

/// The text of a panic payload, for the log (never for an answer).
pub fn panic_payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".to_owned())
}
