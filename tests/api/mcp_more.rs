//! MCP beyond tools, in process, over both transports (duplex and streamable
//! HTTP): resources and templates, reads within the agent budget,
//! subscriptions driven by writes the session did not make, prompts,
//! completions and log notifications.
#![allow(deprecated)] // resources/subscribe and logging are the 2025 revisions' mechanisms

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn::tools::{Cairn, Config, tool_span};
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, CompletionInfo, ErrorCode as RpcErrorCode,
    GetPromptRequestParams, LoggingLevel, LoggingMessageNotificationParam, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ReadResourceRequestParams, Reference,
    ResourceContents, ResourceUpdatedNotificationParam, SetLevelRequestParams,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};

use super::mcp::{Transport, fresh_cairn, serve_http};

/// What the client was sent besides answers.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    Updated(String),
    ListChanged,
    Log(LoggingMessageNotificationParam),
    /// `(token, progress, total, message)`.
    Progress(String, f64, Option<f64>, Option<String>),
}

#[derive(Clone, Default)]
struct Recorder {
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Recorder {
    fn push(&self, seen: Seen) {
        self.seen.lock().unwrap().push(seen);
    }

    fn all(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn count(&self, wanted: impl Fn(&Seen) -> bool) -> usize {
        self.all().iter().filter(|s| wanted(s)).count()
    }

    /// Waits (up to 10 s) until `wanted` holds for at least `n` notifications.
    async fn wait_for(&self, n: usize, wanted: impl Fn(&Seen) -> bool) {
        for _ in 0..200 {
            if self.count(&wanted) >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("expected notification never came; seen: {:?}", self.all());
    }
}

impl ClientHandler for Recorder {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.push(Seen::Updated(params.uri));
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.push(Seen::ListChanged);
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let token = match params.progress_token.0 {
            rmcp::model::NumberOrString::String(s) => s.to_string(),
            rmcp::model::NumberOrString::Number(n) => n.to_string(),
        };
        self.push(Seen::Progress(
            token,
            params.progress,
            params.total,
            params.message,
        ));
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.push(Seen::Log(params));
    }
}

struct Harness {
    client: RunningService<RoleClient, Recorder>,
    recorder: Recorder,
    cairn: Cairn,
    dir: tempfile::TempDir,
    _server: tokio::task::JoinHandle<()>,
}

async fn connect(transport: Transport) -> Harness {
    let (cairn, dir) = fresh_cairn(Config::default());
    let recorder = Recorder::default();
    let (client, server) = match transport {
        Transport::Duplex => {
            let (server_io, client_io) = tokio::io::duplex(64 * 1024);
            let (read, write) = tokio::io::split(server_io);
            let server = tokio::spawn({
                let cairn = cairn.clone();
                async move {
                    let _ = cairn::mcp::serve_lines(cairn, read, write).await;
                }
            });
            (
                recorder
                    .clone()
                    .serve(client_io)
                    .await
                    .expect("client initializes"),
                server,
            )
        }
        Transport::Http => {
            let (url, server) = serve_http(cairn.clone()).await;
            let client = recorder
                .clone()
                .serve(StreamableHttpClientTransport::from_uri(url))
                .await
                .expect("client initializes over HTTP");
            (client, server)
        }
    };
    Harness {
        client,
        recorder,
        cairn,
        dir,
        _server: server,
    }
}

impl Harness {
    /// A write made outside this MCP session (as REST or another agent would).
    async fn write(&self, tool: &str, args: Value) -> Value {
        let envelope = self.cairn.call(tool, args, "test").await;
        envelope
            .outcome
            .unwrap_or_else(|e| panic!("{tool} failed: {e:?}"))
    }

    async fn read(&self, uri: &str) -> Result<(String, Option<String>, Value), ServiceError> {
        let result = self
            .client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await?;
        assert_eq!(result.contents.len(), 1, "one item per read");
        match result.contents.into_iter().next().unwrap() {
            ResourceContents::TextResourceContents {
                text,
                mime_type,
                meta,
                ..
            } => Ok((
                text,
                mime_type,
                meta.map(|m| Value::Object(m.0)).unwrap_or(Value::Null),
            )),
            other => panic!("cairn serves text, got {other:?}"),
        }
    }

    async fn complete(&self, reference: Reference, name: &str, value: &str) -> CompletionInfo {
        self.client
            .complete(CompleteRequestParams::new(
                reference,
                ArgumentInfo::new(name, value),
            ))
            .await
            .expect("completion answers")
            .completion
    }

    async fn prompt(&self, name: &str, args: Value) -> Result<String, ServiceError> {
        let Value::Object(args) = args else {
            panic!("prompt arguments are an object")
        };
        let result = self
            .client
            .get_prompt(GetPromptRequestParams::new(name).with_arguments(args))
            .await?;
        assert_eq!(result.messages.len(), 1, "one message");
        Ok(result.messages[0]
            .content
            .as_text()
            .expect("a text message")
            .text
            .clone())
    }
}

/// The protocol error's code and the registry code in its envelope.
fn rpc_failure(error: ServiceError) -> (RpcErrorCode, String) {
    match error {
        ServiceError::McpError(e) => {
            let data = e.data.expect("the failure envelope rides in `data`");
            assert_eq!(data["ok"], false, "{data}");
            (e.code, data["error"]["code"].as_str().unwrap().to_owned())
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

async fn lists_the_board_then_notes_then_tasks_by_cursor(t: Transport) {
    let h = connect(t).await;
    let task = h
        .write(
            "task_create",
            json!({"title": "Listed", "priority": "urgent"}),
        )
        .await;
    let note = h
        .write(
            "note_write",
            json!({"title": "Listed note", "content": "x"}),
        )
        .await;
    let first = h.client.list_resources(None).await.expect("page one");
    let uris: Vec<&str> = first.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["cairn://board", "cairn://notes/listed-note"]);
    let note_resource = &first.resources[1];
    assert_eq!(note_resource.mime_type.as_deref(), Some("text/markdown"));
    assert_eq!(note_resource.title.as_deref(), Some("Listed note"));
    let annotations = note_resource.annotations.as_ref().expect("annotated");
    assert_eq!(
        annotations.last_modified.as_deref(),
        note["updated_at"].as_str()
    );
    let cursor = first.next_cursor.expect("tasks follow");
    let second = h
        .client
        .list_resources(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        ))
        .await
        .expect("page two");
    assert_eq!(second.resources.len(), 1);
    let resource = &second.resources[0];
    assert_eq!(
        resource.uri,
        format!("cairn://tasks/{}", task["id"].as_str().unwrap())
    );
    assert_eq!(resource.mime_type.as_deref(), Some("application/json"));
    assert_eq!(resource.annotations.as_ref().unwrap().priority, Some(1.0));
    assert_eq!(second.next_cursor, None, "the last page");
}

async fn a_cursor_not_given_out_is_invalid_cursor(t: Transport) {
    let h = connect(t).await;
    let error = h
        .client
        .list_resources(Some(
            PaginatedRequestParams::default().with_cursor(Some("page-2".into())),
        ))
        .await
        .expect_err("a made-up cursor is refused");
    assert_eq!(
        rpc_failure(error),
        (RpcErrorCode::INVALID_PARAMS, "invalid_cursor".into())
    );
}

async fn templates_name_notes_tasks_and_board_columns(t: Transport) {
    let h = connect(t).await;
    let templates = h.client.list_resource_templates(None).await.unwrap();
    let uris: Vec<&str> = templates
        .resource_templates
        .iter()
        .map(|t| t.uri_template.as_str())
        .collect();
    assert_eq!(
        uris,
        [
            "cairn://notes/{slug}",
            "cairn://tasks/{id}",
            "cairn://board/{status}"
        ]
    );
}

async fn a_note_reads_as_markdown_by_slug_or_id_prefix(t: Transport) {
    let h = connect(t).await;
    let note = h
        .write(
            "note_write",
            json!({"title": "Run: book", "content": "See [[Other]].", "tags": ["ops"]}),
        )
        .await;
    let id = note["id"].as_str().unwrap();
    let (text, mime, meta) = h.read("cairn://notes/run-book").await.unwrap();
    assert_eq!(mime.as_deref(), Some("text/markdown"));
    let expected_header = format!(
        "---\nid: {id}\ntitle: \"Run: book\"\nslug: \"run-book\"\nversion: 1\nupdated_at: {}\n\
         tags: [\"ops\"]\nlinks: []\nunresolved_links: [\"other\"]\n---\n\nSee [[Other]].",
        note["updated_at"].as_str().unwrap()
    );
    assert_eq!(text, expected_header);
    assert_eq!(meta["truncated"], false);
    assert_eq!(meta["trimmed"], json!([]));
    let (by_prefix, _, _) = h
        .read(&format!("cairn://notes/{}", &id[..6]))
        .await
        .unwrap();
    assert_eq!(by_prefix, text);
}

async fn a_task_reads_as_its_json_by_id_prefix(t: Transport) {
    let h = connect(t).await;
    let task = h.write("task_create", json!({"title": "Read me"})).await;
    let id = task["id"].as_str().unwrap();
    let (text, mime, _) = h
        .read(&format!("cairn://tasks/{}", &id[..6]))
        .await
        .unwrap();
    assert_eq!(mime.as_deref(), Some("application/json"));
    let read: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(read, task);
    let error = h.read("cairn://tasks/abc").await.expect_err("too short");
    assert_eq!(
        rpc_failure(error),
        (RpcErrorCode::INVALID_PARAMS, "id_prefix_too_short".into())
    );
    let error = h
        .read("cairn://tasks/0123456789abcdef")
        .await
        .expect_err("nothing there");
    assert_eq!(
        rpc_failure(error),
        (RpcErrorCode::RESOURCE_NOT_FOUND, "task_not_found".into())
    );
}

async fn the_board_and_its_columns_read_as_json(t: Transport) {
    let h = connect(t).await;
    h.write("task_create", json!({"title": "On the board"}))
        .await;
    let (board, _, _) = h.read("cairn://board").await.unwrap();
    let board: Value = serde_json::from_str(&board).unwrap();
    assert_eq!(board["columns"].as_array().unwrap().len(), 4, "{board}");
    let (open, _, _) = h.read("cairn://board/open").await.unwrap();
    let open: Value = serde_json::from_str(&open).unwrap();
    assert_eq!(open["columns"][0]["status"], "open");
    assert_eq!(open["columns"][0]["items"][0]["title"], "On the board");
    let error = h
        .read("cairn://board/doing")
        .await
        .expect_err("no such column");
    assert_eq!(
        rpc_failure(error),
        (RpcErrorCode::INVALID_PARAMS, "invalid_input".into())
    );
}

async fn a_uri_outside_the_scheme_is_invalid_input(t: Transport) {
    let h = connect(t).await;
    for uri in [
        "test://static-text",
        "cairn://links/x",
        "cairn://notes/",
        "cairn://tasks/a/b",
    ] {
        let error = h.read(uri).await.expect_err(uri);
        assert_eq!(
            rpc_failure(error),
            (RpcErrorCode::INVALID_PARAMS, "invalid_input".into()),
            "{uri}"
        );
    }
}

async fn a_large_note_is_cut_to_the_agent_budget_and_says_so(t: Transport) {
    let h = connect(t).await;
    let content = "All work and no play. ".repeat(10_000);
    h.write("note_write", json!({"title": "Huge", "content": content}))
        .await;
    let (text, _, meta) = h.read("cairn://notes/huge").await.unwrap();
    assert!(
        text.chars().count() <= 32_000,
        "{} chars",
        text.chars().count()
    );
    assert!(text.contains("\ntruncated: true\n"), "the header says so");
    assert!(
        text.ends_with("…[truncated]"),
        "the content is cut with the marker"
    );
    assert_eq!(meta["truncated"], true);
    let trimmed = meta["trimmed"].as_array().unwrap();
    assert_eq!(trimmed.len(), 1, "{meta}");
    assert_eq!(trimmed[0]["path"], "/content");
    assert_eq!(trimmed[0]["kind"], "string");
    assert_eq!(trimmed[0]["from"], content.chars().count());
}

async fn a_subscribed_task_is_updated_when_anyone_writes_it(t: Transport) {
    let h = connect(t).await;
    let task = h.write("task_create", json!({"title": "Watched"})).await;
    let id = task["id"].as_str().unwrap();
    let uri = format!("cairn://tasks/{}", &id[..8]);
    h.client
        .subscribe(SubscribeRequestParams::new(uri.clone()))
        .await
        .expect("subscribed");
    h.write("task_claim", json!({"id": id, "agent": "elsewhere"}))
        .await;
    let updated = |s: &Seen| s == &Seen::Updated(uri.clone());
    h.recorder.wait_for(1, updated).await;
    // Another task's write does not touch this one.
    let other = h.write("task_create", json!({"title": "Other"})).await;
    h.write(
        "task_update",
        json!({"id": other["id"], "title": "Other 2"}),
    )
    .await;
    h.client
        .unsubscribe(UnsubscribeRequestParams::new(uri.clone()))
        .await
        .expect("unsubscribed");
    h.write("task_release", json!({"id": id, "agent": "elsewhere"}))
        .await;
    // Feed order: once the marker note's list_changed is in, the release's
    // update (had it been sent) would be in too.
    let before = h.recorder.count(|s| s == &Seen::ListChanged);
    h.write("note_write", json!({"title": "Marker", "content": "m"}))
        .await;
    h.recorder
        .wait_for(before + 1, |s| s == &Seen::ListChanged)
        .await;
    assert_eq!(h.recorder.count(updated), 1, "{:?}", h.recorder.all());
}

async fn the_board_is_updated_by_any_task_write(t: Transport) {
    let h = connect(t).await;
    h.client
        .subscribe(SubscribeRequestParams::new("cairn://board"))
        .await
        .unwrap();
    h.write("task_create", json!({"title": "New card"})).await;
    h.recorder
        .wait_for(1, |s| s == &Seen::Updated("cairn://board".into()))
        .await;
}

async fn adding_or_removing_notes_changes_the_list(t: Transport) {
    let h = connect(t).await;
    // No subscription needed: list_changed flows from the session's start.
    let note = h
        .write("note_write", json!({"title": "Arrives", "content": "a"}))
        .await;
    h.recorder.wait_for(1, |s| s == &Seen::ListChanged).await;
    h.write("note_delete", json!({"id": note["id"]})).await;
    h.recorder.wait_for(2, |s| s == &Seen::ListChanged).await;
}

async fn subscribing_to_nothing_is_not_found(t: Transport) {
    let h = connect(t).await;
    let error = h
        .client
        .subscribe(SubscribeRequestParams::new("cairn://notes/no-such-note"))
        .await
        .expect_err("nothing to watch");
    assert_eq!(
        rpc_failure(error),
        (RpcErrorCode::RESOURCE_NOT_FOUND, "note_not_found".into())
    );
}

async fn prompts_are_listed_with_their_arguments(t: Transport) {
    let h = connect(t).await;
    let prompts = h.client.list_prompts(None).await.unwrap().prompts;
    let shape: Vec<(&str, Vec<(&str, bool)>)> = prompts
        .iter()
        .map(|p| {
            let args = p.arguments.as_ref().unwrap();
            (
                p.name.as_str(),
                args.iter()
                    .map(|a| (a.name.as_str(), a.required == Some(true)))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            ("claim_next_task", vec![("agent", true), ("tag", false)]),
            (
                "hand_over_task",
                vec![("task", true), ("agent", true), ("to", false)]
            ),
            ("summarise_board_changes", vec![("since", false)]),
        ]
    );
}

async fn claim_next_task_lists_open_tasks_most_urgent_first(t: Transport) {
    let h = connect(t).await;
    let low = h
        .write(
            "task_create",
            json!({"title": "Low one", "priority": "low", "tags": ["x"]}),
        )
        .await;
    let urgent = h
        .write(
            "task_create",
            json!({"title": "Urgent one", "priority": "urgent", "tags": ["x"]}),
        )
        .await;
    let untagged = h.write("task_create", json!({"title": "Untagged"})).await;
    let text = h
        .prompt("claim_next_task", json!({"agent": "ann", "tag": "x"}))
        .await
        .unwrap();
    let at = |task: &Value| text.find(task["id"].as_str().unwrap());
    assert!(at(&urgent).expect(&text) < at(&low).expect(&text), "{text}");
    assert_eq!(at(&untagged), None, "{text}");
    assert!(text.contains(r#"{"id": "<id>", "agent": "ann"}"#), "{text}");
}

async fn hand_over_task_names_the_task_and_the_steps(t: Transport) {
    let h = connect(t).await;
    let task = h
        .write(
            "task_create",
            json!({"title": "Half done", "description": "Port the parser."}),
        )
        .await;
    let id = task["id"].as_str().unwrap();
    h.write("task_claim", json!({"id": id, "agent": "ann"}))
        .await;
    let text = h
        .prompt(
            "hand_over_task",
            json!({"task": &id[..6], "agent": "ann", "to": "bob"}),
        )
        .await
        .unwrap();
    for needle in [
        id,
        "Port the parser.",
        "You hold its claim",
        "note_write",
        "link_add",
        "task_release",
        "`bob`",
    ] {
        assert!(text.contains(needle), "{needle} in {text}");
    }
    let text = h
        .prompt("hand_over_task", json!({"task": id, "agent": "bob"}))
        .await
        .unwrap();
    assert!(text.contains("held by `ann`, not by you"), "{text}");
}

async fn summarise_board_changes_shows_the_feed_since_a_cursor(t: Transport) {
    let h = connect(t).await;
    let task = h.write("task_create", json!({"title": "Summarised"})).await;
    h.write("task_claim", json!({"id": task["id"], "agent": "ann"}))
        .await;
    let text = h
        .prompt("summarise_board_changes", json!({}))
        .await
        .unwrap();
    assert!(text.contains("task.created task"), "{text}");
    assert!(
        text.contains("task.claimed task") && text.contains("by `ann`"),
        "{text}"
    );
    assert!(text.ends_with("Next cursor: 2"), "{text}");
    let later = h
        .prompt("summarise_board_changes", json!({"since": "2"}))
        .await
        .unwrap();
    assert!(later.contains("(nothing changed)"), "{later}");
}

async fn prompt_arguments_are_checked(t: Transport) {
    let h = connect(t).await;
    let missing = h
        .prompt("hand_over_task", json!({"agent": "ann"}))
        .await
        .unwrap_err();
    assert_eq!(
        rpc_failure(missing),
        (RpcErrorCode::INVALID_PARAMS, "missing_field".into())
    );
    let unknown = h
        .prompt("claim_next_task", json!({"agnet": "ann"}))
        .await
        .unwrap_err();
    assert_eq!(
        rpc_failure(unknown),
        (RpcErrorCode::INVALID_PARAMS, "unknown_field".into())
    );
    let nothing = h.prompt("claim_next", json!({})).await.unwrap_err();
    assert_eq!(
        rpc_failure(nothing),
        (RpcErrorCode::INVALID_PARAMS, "invalid_input".into())
    );
}

async fn completion_offers_ids_slugs_tags_agents_and_statuses(t: Transport) {
    let h = connect(t).await;
    let task = h
        .write(
            "task_create",
            json!({"title": "Complete me", "tags": ["backend"]}),
        )
        .await;
    let id = task["id"].as_str().unwrap();
    h.write("task_claim", json!({"id": id, "agent": "ann-the-agent"}))
        .await;
    h.write(
        "note_write",
        json!({"title": "Deploy guide", "content": "x", "tags": ["backlog"]}),
    )
    .await;

    let ids = h
        .complete(
            Reference::for_resource("cairn://tasks/{id}"),
            "id",
            &id[..3],
        )
        .await;
    assert!(ids.values.contains(&id.to_owned()), "{ids:?}");
    let slugs = h
        .complete(
            Reference::for_resource("cairn://notes/{slug}"),
            "slug",
            "dep",
        )
        .await;
    assert_eq!(slugs.values, ["deploy-guide"]);
    let statuses = h
        .complete(
            Reference::for_resource("cairn://board/{status}"),
            "status",
            "C",
        )
        .await;
    assert_eq!(statuses.values, ["claimed", "cancelled"]);
    assert_eq!((statuses.total, statuses.has_more), (Some(2), Some(false)));
    let tags = h
        .complete(Reference::for_prompt("claim_next_task"), "tag", "back")
        .await;
    assert_eq!(tags.values, ["backend", "backlog"]);
    let agents = h
        .complete(Reference::for_prompt("hand_over_task"), "agent", "ann")
        .await;
    assert_eq!(agents.values, ["ann-the-agent"]);
    let tasks = h
        .complete(Reference::for_prompt("hand_over_task"), "task", "")
        .await;
    assert_eq!(tasks.values, [id]);
    let error = h
        .client
        .complete(CompleteRequestParams::new(
            Reference::for_prompt("hand_over_task"),
            ArgumentInfo::new("agnet", ""),
        ))
        .await
        .expect_err("no such argument");
    assert_eq!(
        rpc_failure(error),
        (RpcErrorCode::INVALID_PARAMS, "unknown_field".into())
    );
}

async fn failures_reach_the_client_as_log_messages_from_the_level_set(t: Transport) {
    let h = connect(t).await;
    let is_log = |s: &Seen| matches!(s, Seen::Log(_));
    h.client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("task_get")
                .with_arguments(json!({"id": "abcdef0123"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    // A caller's mistake is `notice`, below the default `warning`.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(h.recorder.count(is_log), 0, "{:?}", h.recorder.all());
    h.client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Notice))
        .await
        .expect("setLevel answers {}");
    h.read("cairn://tasks/abcdef0123")
        .await
        .expect_err("not there");
    h.recorder.wait_for(1, is_log).await;
    let Some(Seen::Log(log)) = h.recorder.all().into_iter().find(is_log) else {
        unreachable!()
    };
    assert_eq!(log.level, LoggingLevel::Notice);
    assert_eq!(log.logger.as_deref(), Some("cairn"));
    let data = log.data.as_object().unwrap();
    let keys: Vec<&str> = data.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["tool", "request_id", "code", "message"],
        "envelope fields only"
    );
    assert_eq!(data["code"], "task_not_found");
    assert_eq!(data["tool"], "task_get");
}

/// Two broken links (a dangling one, a self loop) behind the tools' back.
fn break_the_graph(db: &std::path::Path, task: &str) {
    let conn = rusqlite::Connection::open(db).expect("open the store file");
    conn.execute_batch(&format!(
        "INSERT INTO links (id, source, target, kind, created_at) VALUES
           ('d0000000000000000000000000000000', '{task}', 'gone0000000000000000000000000000', 'blocks', '2026-01-01T00:00:00.000000Z'),
           ('s0000000000000000000000000000000', '{task}', '{task}', 'blocks', '2026-01-01T00:00:00.000000Z');"
    ))
    .expect("insert broken links");
}

async fn graph_doctor_with_fix_reports_its_progress(t: Transport) {
    let h = connect(t).await;
    let task = h.write("task_create", json!({"title": "Linked"})).await;
    break_the_graph(&h.dir.path().join("cairn.db"), task["id"].as_str().unwrap());
    let mut params = rmcp::model::CallToolRequestParams::new("graph_doctor")
        .with_arguments(json!({"fix": true}).as_object().unwrap().clone());
    // rmcp's client gives every request a progress token of its own; set one
    // anyway, as a client of any SDK would.
    let mut meta = rmcp::model::RequestMetaObject::new();
    meta.set_progress_token(ProgressToken(rmcp::model::NumberOrString::String(
        "doctor-1".into(),
    )));
    params.meta = Some(meta);
    let result = h.client.call_tool(params).await.expect("answers");
    let envelope: Value = serde_json::from_str(&result.content[0].as_text().unwrap().text).unwrap();
    assert_eq!(envelope["data"]["removed"], 2, "{envelope}");
    // Sent in order before the answer; the client hands notifications to its
    // handler concurrently, so wait for the handler, and sort.
    h.recorder
        .wait_for(3, |s| matches!(s, Seen::Progress(..)))
        .await;
    let mut progress: Vec<(f64, Option<f64>, Option<String>)> = h
        .recorder
        .all()
        .into_iter()
        .filter_map(|s| match s {
            Seen::Progress(_, p, total, message) => Some((p, total, message)),
            _ => None,
        })
        .collect();
    progress.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(
        progress,
        [
            (0.0, Some(3.0), Some("scanning the link graph".into())),
            (1.0, Some(3.0), Some("2 broken links found".into())),
            (3.0, Some(3.0), Some("2 broken links removed".into())),
        ],
        "the three steps: {:?}",
        h.recorder.all()
    );
}

/// Cancellation reaches the tool through its signal: a doctor cancelled
/// before its repair reports the scan and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_graph_doctor_fixes_nothing() {
    let (cairn, dir) = fresh_cairn(Config::default());
    let task = cairn.call("task_create", json!({"title": "t"}), "t").await;
    let id = task.outcome.unwrap()["id"].as_str().unwrap().to_owned();
    break_the_graph(&dir.path().join("cairn.db"), &id);
    let def = cairn::tools::registry::find("graph_doctor").unwrap();
    let signal = Arc::new(cairn::tools::Signal::default());
    signal.cancel();
    let cancelled = cairn
        .call_def_with(def, json!({"fix": true}), "t", signal, tool_span(def, "t"))
        .await
        .outcome
        .unwrap();
    assert_eq!(
        (cancelled["fixed"].clone(), cancelled["removed"].clone()),
        (json!(false), json!(0))
    );
    assert_eq!(cancelled["dangling"].as_array().unwrap().len(), 1);
    let after = cairn
        .call("graph_doctor", json!({}), "t")
        .await
        .outcome
        .unwrap();
    assert_eq!(after["healthy"], false, "nothing was repaired: {after}");
}

// `on_both_transports!` comes from tests/api/mcp.rs (`#[macro_use]` in main.rs).
on_both_transports!(
    lists_the_board_then_notes_then_tasks_by_cursor,
    a_cursor_not_given_out_is_invalid_cursor,
    templates_name_notes_tasks_and_board_columns,
    a_note_reads_as_markdown_by_slug_or_id_prefix,
    a_task_reads_as_its_json_by_id_prefix,
    the_board_and_its_columns_read_as_json,
    a_uri_outside_the_scheme_is_invalid_input,
    a_large_note_is_cut_to_the_agent_budget_and_says_so,
    a_subscribed_task_is_updated_when_anyone_writes_it,
    the_board_is_updated_by_any_task_write,
    adding_or_removing_notes_changes_the_list,
    subscribing_to_nothing_is_not_found,
    prompts_are_listed_with_their_arguments,
    claim_next_task_lists_open_tasks_most_urgent_first,
    hand_over_task_names_the_task_and_the_steps,
    summarise_board_changes_shows_the_feed_since_a_cursor,
    prompt_arguments_are_checked,
    completion_offers_ids_slugs_tags_agents_and_statuses,
    failures_reach_the_client_as_log_messages_from_the_level_set,
    graph_doctor_with_fix_reports_its_progress,
);
