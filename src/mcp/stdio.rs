//! The stdio transport: rmcp's newline-delimited JSON-RPC, with `tools/call`
//! read straight into its request type.
//!
//! rmcp reads a client's request as an untagged union of 22 request types,
//! tried in order; a `tools/call` fails 13 of them first, and each failure
//! builds an error message. That was about a quarter of the instructions of a
//! `task_get` over stdio (BENCHMARKS.md, "Where an MCP call's instructions go
//! over stdio"). A line that is a request for `tools/call` is read here as
//! exactly that request; every other line, and any `tools/call` that does not
//! read as one, goes through rmcp's own parser, so what a line means is
//! rmcp's either way.
//!
//! Answers are written as rmcp writes them, with one addition: a successful
//! tool result comes from the server without its `structuredContent`
//! ([`super::StructuredContent::FromText`]), which is the same JSON as its
//! text block, and [`encode`] writes that text in as the value, as it is.
//!
//! At most [`WINDOW`] requests are in flight ([`Window`]): rmcp spawns a task
//! for every request it is handed, so a client that pipelines thousands of
//! calls would otherwise have them all read, parsed and waiting in memory at
//! once. Past the window the next line is read when an answer goes out, and
//! the rest wait in the pipe, where the client's writes then wait too.
//!
//! Kept beside rmcp's own transport because it measured cheaper
//! (2026-12-07): a `task_get` over stdio took 116,000 instructions with this
//! transport and 157,000 with rmcp's `AsyncRwTransport` in its place (behind
//! the same window, `structuredContent` built as a value), 26% fewer here;
//! rmcp's untagged parse of a `tools/call` and the envelope built again as a
//! value and serialized make the difference. Counted by callgrind, the total
//! of a run of 100 calls taken from one of 1,100 and divided by the 1,100
//! calls between them (warm-up included):
//! `CARGO_PROFILE_BENCH_LTO=false CARGO_PROFILE_BENCH_CODEGEN_UNITS=16
//! CAIRN_BENCH_CALLS=1100 CAIRN_BENCH_STDIO_WRAPPER='valgrind --tool=callgrind
//! --callgrind-out-file=cg.out' cargo bench --bench mcp_calls`, then
//! `CAIRN_BENCH_CALLS=100`, each total on `cg.out`'s `summary:` line.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, CallToolResult, ClientNotification, ClientRequest, ErrorData, JsonRpcMessage,
    JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, RequestId, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{
    DEFAULT_MAX_LINE_LENGTH, JsonRpcMessageCodec, JsonRpcMessageCodecError,
};
use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Mutex, Notify};
use tokio_stream::StreamExt;
use tokio_util::bytes::{Bytes, BytesMut};
use tokio_util::codec::{AnyDelimiterCodec, AnyDelimiterCodecError, Decoder, FramedRead};

/// Requests read and not yet answered, at most: enough for an agent's
/// parallel calls and for the store's writers to share their commits, small
/// enough that a pipelined flood costs a few tasks' memory, not the flood's.
const WINDOW: usize = 64;

/// The server's side of one stdio session.
pub(super) struct Stdio<R, W> {
    lines: FramedRead<R, Lines>,
    /// Shared with the sends in flight; `None` once closed.
    out: Arc<Mutex<Option<W>>>,
    window: Arc<Window>,
}

/// The requests in flight: counted when read, let go when answered (or
/// cancelled by the client, which rmcp then does not answer). A
/// `subscriptions/listen` stays open until the client cancels it, so it is
/// not counted: the cancellation must always be read. cairn sends the client
/// no requests, so no answer the server waits for can queue behind the
/// window.
#[derive(Default)]
struct Window {
    /// Requests in flight by id (a client may reuse an id).
    open: parking_lot::Mutex<HashMap<RequestId, usize>>,
    answered: Notify,
}

impl Window {
    fn full(&self) -> bool {
        self.open.lock().values().sum::<usize>() >= WINDOW
    }

    /// Waits (cancel-safe) until fewer than [`WINDOW`] requests are in flight.
    async fn room(&self) {
        loop {
            let answered = self.answered.notified();
            if !self.full() {
                return;
            }
            answered.await;
        }
    }

    /// Notes what a message read from the client opens or ends.
    fn read(&self, message: &RxJsonRpcMessage<RoleServer>) {
        match message {
            JsonRpcMessage::Request(JsonRpcRequest { id, request, .. })
                if !matches!(request, ClientRequest::SubscriptionsListenRequest(_)) =>
            {
                *self.open.lock().entry(id.clone()).or_default() += 1;
            }
            JsonRpcMessage::Notification(JsonRpcNotification {
                notification: ClientNotification::CancelledNotification(cancelled),
                ..
            }) => {
                if let Some(id) = &cancelled.params.request_id {
                    self.close(id);
                }
            }
            _ => {}
        }
    }

    /// Notes what a message written to the client answered.
    fn sent(&self, message: &TxJsonRpcMessage<RoleServer>) {
        let id = match message {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        if let Some(id) = id {
            self.close(id);
        }
    }

    fn close(&self, id: &RequestId) {
        let mut open = self.open.lock();
        if let Some(count) = open.get_mut(id) {
            *count -= 1;
            if *count == 0 {
                open.remove(id);
            }
            drop(open);
            self.answered.notify_waiters();
        }
    }
}

impl<R, W> Stdio<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(super) fn new(read: R, write: W) -> Self {
        Self {
            lines: FramedRead::new(read, Lines::default()),
            out: Arc::new(Mutex::new(Some(write))),
            window: Arc::default(),
        }
    }

    /// Writes `message` and flushes it, after the messages sent before it.
    fn write(
        &self,
        message: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let out = self.out.clone();
        let window = self.window.clone();
        async move {
            let written = async {
                let line = encode(&message)?;
                match out.lock().await.as_mut() {
                    Some(out) => {
                        out.write_all(&line).await?;
                        out.flush().await
                    }
                    None => Err(io::Error::new(
                        io::ErrorKind::NotConnected,
                        "the transport is closed",
                    )),
                }
            }
            .await;
            // Written (or never to be): the next request may be read.
            window.sent(&message);
            written
        }
    }
}

impl<R, W> Transport<RoleServer> for Stdio<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        self.write(item)
    }

    /// Cancel-safe, as rmcp needs (it polls this in a `select!`): the only
    /// waits are for room in the window and for the next line, whose partial
    /// bytes stay in the reader.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            self.window.room().await;
            let line = match self.lines.next().await? {
                Ok(Line::Text(line)) => line,
                Ok(Line::Oversized) => {
                    tracing::error!(
                        max_line_length = DEFAULT_MAX_LINE_LENGTH,
                        "an incoming message exceeded the maximum line length; it was dropped"
                    );
                    continue;
                }
                Err(e) => {
                    tracing::error!(error = %e, "cannot read stdin");
                    return None;
                }
            };
            match parse(&line) {
                Ok(Some(message)) => {
                    self.window.read(&message);
                    return Some(message);
                }
                Ok(None) => {}
                Err(NotAMessage) => {
                    // Well-formed JSON that is no JSON-RPC message: answered
                    // as rmcp answers it, on its own task so that this read
                    // stays cancel-safe.
                    let error = ErrorData::invalid_request("Invalid request", None);
                    tokio::spawn(self.write(TxJsonRpcMessage::<RoleServer>::error(error, None)));
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        if let Some(mut out) = self.out.lock().await.take() {
            out.shutdown().await?;
        }
        Ok(())
    }
}

/// A line that is JSON but no JSON-RPC message: answered with an Invalid
/// Request error.
#[derive(Debug)]
struct NotAMessage;

/// The message on one line; `None` for a line that is not JSON, or a
/// notification rmcp ignores: dropped, as the other SDKs drop unparsable
/// input (answering it could start an error storm).
fn parse(line: &[u8]) -> Result<Option<RxJsonRpcMessage<RoleServer>>, NotAMessage> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() {
        return Ok(None);
    }
    if let Some(call) = tool_call(line) {
        return Ok(Some(call));
    }
    let mut codec = JsonRpcMessageCodec::<RxJsonRpcMessage<RoleServer>>::default();
    match codec.decode_eof(&mut BytesMut::from(line)) {
        Ok(message) => Ok(message),
        Err(JsonRpcMessageCodecError::Serde(e))
            if matches!(
                e.classify(),
                serde_json::error::Category::Data | serde_json::error::Category::Io
            ) =>
        {
            tracing::debug!(error = %e, "an incoming message is no JSON-RPC message");
            Err(NotAMessage)
        }
        Err(e) => {
            tracing::debug!(error = %e, "ignoring an unparsable incoming message");
            Ok(None)
        }
    }
}

/// `line` as a `tools/call` request, when it is one: rmcp's reading of it
/// (a request has a method and an id and no result or error, each counted
/// present whatever its value) with the one request type it can be.
fn tool_call(line: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
    fn present<'de, D: serde::Deserializer<'de>>(value: D) -> Result<bool, D::Error> {
        IgnoredAny::deserialize(value).map(|_| true)
    }
    #[derive(Deserialize)]
    struct Shape<'a> {
        #[serde(borrow)]
        method: Option<&'a str>,
        #[serde(default, deserialize_with = "present")]
        id: bool,
        #[serde(default, deserialize_with = "present")]
        result: bool,
        #[serde(default, deserialize_with = "present")]
        error: bool,
    }
    let shape: Shape<'_> = serde_json::from_slice(line).ok()?;
    if shape.method != Some("tools/call") || !shape.id || shape.result || shape.error {
        return None;
    }
    let request: JsonRpcRequest<CallToolRequest> = serde_json::from_slice(line).ok()?;
    Some(JsonRpcMessage::Request(JsonRpcRequest {
        jsonrpc: request.jsonrpc,
        id: request.id,
        request: ClientRequest::CallToolRequest(request.request),
    }))
}

/// `message` as rmcp's codec writes it (JSON and a newline), with a
/// successful tool result's missing `structuredContent` written from its
/// text block.
fn encode(message: &TxJsonRpcMessage<RoleServer>) -> Result<Vec<u8>, io::Error> {
    let mut line = serde_json::to_vec(message)?;
    if let Some(text) = structured_from_text(message) {
        // The message ends with the result's `}` and its own: the result is
        // a response's last field, and an object (`content` is always
        // there), so the value goes in as the result's last field.
        debug_assert!(line.ends_with(b"}}"));
        line.truncate(line.len() - 2);
        line.reserve(text.len() + 24);
        line.extend_from_slice(b",\"structuredContent\":");
        line.extend_from_slice(text.as_bytes());
        line.extend_from_slice(b"}}");
    }
    line.push(b'\n');
    Ok(line)
}

/// The text of a successful tool result that came without its
/// `structuredContent`: the envelope, which is that value.
fn structured_from_text(message: &TxJsonRpcMessage<RoleServer>) -> Option<&str> {
    let JsonRpcMessage::Response(JsonRpcResponse {
        result: ServerResult::CallToolResult(result),
        ..
    }) = message
    else {
        return None;
    };
    let CallToolResult {
        content,
        structured_content: None,
        is_error: Some(false),
        ..
    } = result
    else {
        return None;
    };
    match content.as_slice() {
        [block] => block.as_text().map(|text| text.text.as_str()),
        _ => None,
    }
}

/// Newline-delimited lines of at most rmcp's [`DEFAULT_MAX_LINE_LENGTH`];
/// a longer one is skipped to its end, and the session goes on.
struct Lines(AnyDelimiterCodec);

impl Default for Lines {
    fn default() -> Self {
        Self(AnyDelimiterCodec::new_with_max_length(
            b"\n".to_vec(),
            b"\n".to_vec(),
            DEFAULT_MAX_LINE_LENGTH,
        ))
    }
}

enum Line {
    Text(Bytes),
    Oversized,
}

impl Decoder for Lines {
    type Item = Line;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Line>, io::Error> {
        match self.0.decode(buf) {
            Ok(line) => Ok(line.map(Line::Text)),
            Err(AnyDelimiterCodecError::MaxChunkLengthExceeded) => Ok(Some(Line::Oversized)),
            Err(AnyDelimiterCodecError::Io(e)) => Err(e),
        }
    }

    /// A last line with no newline is an incomplete message: dropped.
    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Line>, io::Error> {
        let line = self.decode(buf)?;
        if line.is_none() {
            buf.clear();
        }
        Ok(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Parsed = Result<Option<RxJsonRpcMessage<RoleServer>>, NotAMessage>;

    fn tool_name(parsed: &Parsed) -> Option<&str> {
        match parsed {
            Ok(Some(JsonRpcMessage::Request(JsonRpcRequest {
                request: ClientRequest::CallToolRequest(call),
                ..
            }))) => Some(call.params.name.as_ref()),
            _ => None,
        }
    }

    /// Every line reads as rmcp's own parser reads it.
    #[test]
    fn a_line_means_what_it_means_to_rmcp() {
        let lines: &[&str] = &[
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"task_get","arguments":{"id":"abc"}}}"#,
            r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"health","_meta":{"progressToken":3}}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","result":null,"params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools\/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/not_a_standard_one"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
            r#"[1,2]"#,
            r#"{"id":1,"method":"tools/call""#,
            "not json",
        ];
        for line in lines {
            let ours = parse(line.as_bytes());
            let mut codec = JsonRpcMessageCodec::<RxJsonRpcMessage<RoleServer>>::default();
            let theirs = codec.decode_eof(&mut BytesMut::from(line.as_bytes()));
            match (&ours, &theirs) {
                (Ok(Some(a)), Ok(Some(b))) => assert_eq!(
                    serde_json::to_value(a).unwrap(),
                    serde_json::to_value(b).unwrap(),
                    "{line}"
                ),
                (Ok(None), Ok(None)) => {}
                (Ok(None) | Err(NotAMessage), Err(_)) => {}
                _ => panic!("{line}: ours {ours:?}, rmcp's {theirs:?}"),
            }
        }
        let call = parse(lines[0].as_bytes());
        assert_eq!(tool_name(&call), Some("task_get"), "read on the fast path");
        assert!(
            tool_call(lines[2].as_bytes()).is_none(),
            "array arguments: rmcp's reading"
        );
        assert!(
            tool_call(lines[3].as_bytes()).is_none(),
            "a result, even null, is no request"
        );
        assert!(matches!(parse(b"[1,2]"), Err(NotAMessage)));
        assert!(matches!(parse(b"not json"), Ok(None)));
    }

    fn response(result: CallToolResult) -> TxJsonRpcMessage<RoleServer> {
        TxJsonRpcMessage::<RoleServer>::response(
            ServerResult::CallToolResult(result),
            rmcp::model::RequestId::Number(7),
        )
    }

    fn rmcp_line(message: &TxJsonRpcMessage<RoleServer>) -> Vec<u8> {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        line
    }

    /// A success without its `structuredContent` is written as rmcp would
    /// write it with the text read back as that value; every other message
    /// exactly as rmcp writes it.
    #[test]
    fn a_success_gets_its_text_as_structured_content() {
        use rmcp::model::ContentBlock;
        let text = r#"{"ok":true,"data":{"id":"t1","title":"a \"quoted\" ü"},"meta":{"n":1}}"#;
        let success = || CallToolResult::success(vec![ContentBlock::text(text)]);
        let mut older_peer = success();
        older_peer.result_type = None;
        let mut with_meta = success();
        with_meta.meta = Some(rmcp::model::MetaObject(serde_json::Map::from_iter([(
            "k".to_owned(),
            serde_json::json!(1),
        )])));
        let successes = [success(), older_peer, with_meta];
        for result in successes {
            let mut filled = result.clone();
            filled.structured_content = Some(serde_json::from_str(text).unwrap());
            let ours = encode(&response(result)).unwrap();
            assert_eq!(ours.last(), Some(&b'\n'));
            let ours: serde_json::Value = serde_json::from_slice(&ours).unwrap();
            let theirs: serde_json::Value =
                serde_json::from_slice(&rmcp_line(&response(filled))).unwrap();
            assert_eq!(ours, theirs);
        }

        let as_is = [
            response(CallToolResult::error(vec![ContentBlock::text(text)])),
            response({
                let mut result = success();
                result.structured_content = Some(serde_json::json!({"other": true}));
                result
            }),
            response(CallToolResult::success(vec![
                ContentBlock::text(text),
                ContentBlock::text(text),
            ])),
            TxJsonRpcMessage::<RoleServer>::error(
                ErrorData::invalid_request("Invalid request", None),
                None,
            ),
        ];
        for message in as_is {
            assert_eq!(encode(&message).unwrap(), rmcp_line(&message));
        }
    }

    fn request_line(id: usize, method: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"name":"health"}}}}"#)
            + "\n"
    }

    /// Whether `receive` hands over a message within a short wait.
    async fn receives<R, W>(stdio: &mut Stdio<R, W>) -> bool
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let wait = std::time::Duration::from_millis(100);
        tokio::time::timeout(wait, stdio.receive())
            .await
            .is_ok_and(|m| m.is_some())
    }

    /// A pipelining client gets [`WINDOW`] requests read; the next is read
    /// when one of them is answered, or cancelled; a `subscriptions/listen`
    /// (open until cancelled) takes no room.
    #[tokio::test]
    async fn requests_past_the_window_wait_for_an_answer() {
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(server);
        let mut stdio = Stdio::new(read, write);
        let mut lines = String::new();
        for id in 0..WINDOW {
            lines += &request_line(id, "tools/call");
        }
        lines += r#"{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{}}}"#;
        lines += "\n";
        lines += &request_line(WINDOW, "tools/call");
        lines += &request_line(WINDOW + 1, "tools/call");
        client.write_all(lines.as_bytes()).await.unwrap();

        for _ in 0..WINDOW {
            assert!(receives(&mut stdio).await, "the window's requests are read");
        }
        assert!(
            !receives(&mut stdio).await,
            "a full window reads nothing more"
        );

        let answer = |id| {
            TxJsonRpcMessage::<RoleServer>::response(ServerResult::empty(()), RequestId::Number(id))
        };
        stdio.send(answer(3)).await.unwrap();
        assert!(
            receives(&mut stdio).await,
            "an answer makes room: the listen"
        );
        assert!(
            receives(&mut stdio).await,
            "and one request, uncounted listen aside"
        );
        assert!(!receives(&mut stdio).await, "full again");

        stdio.send(answer(7)).await.unwrap();
        assert!(receives(&mut stdio).await, "the last pipelined request");
        let cancel =
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#;
        client
            .write_all(format!("{cancel}\n").as_bytes())
            .await
            .unwrap();
        assert!(
            !receives(&mut stdio).await,
            "the cancellation waits its turn"
        );
        stdio.send(answer(9)).await.unwrap();
        assert!(receives(&mut stdio).await, "the cancellation is read");
        let more: String = (100..103)
            .map(|id| request_line(id, "tools/call"))
            .collect();
        client.write_all(more.as_bytes()).await.unwrap();
        assert!(receives(&mut stdio).await, "room of the answer");
        assert!(receives(&mut stdio).await, "room of the cancelled request");
        assert!(!receives(&mut stdio).await, "and no more");
    }

    #[test]
    fn a_reused_id_is_in_flight_once_per_request() {
        let window = Window::default();
        let request = |id| {
            let line = request_line(id, "tools/call");
            parse(line.trim_end().as_bytes()).unwrap().unwrap()
        };
        for _ in 0..WINDOW {
            window.read(&request(1));
        }
        assert!(window.full());
        let answer =
            TxJsonRpcMessage::<RoleServer>::response(ServerResult::empty(()), RequestId::Number(1));
        window.sent(&answer);
        assert!(!window.full(), "one answer, one request fewer");
        window.read(&request(1));
        assert!(window.full());
        let unknown = TxJsonRpcMessage::<RoleServer>::response(
            ServerResult::empty(()),
            RequestId::Number(99),
        );
        window.sent(&unknown);
        assert!(
            window.full(),
            "an answer to nothing in flight frees nothing"
        );
    }

    #[tokio::test]
    async fn lines_over_the_limit_are_skipped_and_the_session_goes_on() {
        let mut codec = Lines::default();
        let mut buf = BytesMut::from(&vec![b'x'; DEFAULT_MAX_LINE_LENGTH + 2][..]);
        buf.extend_from_slice(b"tail\n{\"a\":1}\r\nrest");
        assert!(matches!(codec.decode(&mut buf), Ok(Some(Line::Oversized))));
        match codec.decode(&mut buf) {
            Ok(Some(Line::Text(line))) => assert_eq!(&line[..], b"{\"a\":1}\r"),
            _ => panic!("the line after the oversized one"),
        }
        assert!(
            matches!(codec.decode_eof(&mut buf), Ok(None)),
            "no newline: dropped"
        );
    }
}
