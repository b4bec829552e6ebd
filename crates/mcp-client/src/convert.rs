//! A server's tool as a canonical dynamic [`Tool`], and its results as tackle outputs.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ResourceContents};
use rmcp::service::{Peer, RoleClient};
use serde_json::Value;
use tackle_output_store::{MAX_INLINE_MEDIA_BYTES, OutputStore};
use tackle_tool_core::{Content, Context, Halt, Rendered, Tool, ToolClass, ToolError};

use crate::gate::{Gate, GateRequest};
use crate::oversize::{LIMIT, META_KEY, Oversized, Spills};

/// What one registered tool needs at call time.
pub(crate) struct Remote {
    pub(crate) server: String,
    pub(crate) name: String,
    pub(crate) original: String,
    pub(crate) destructive: bool,
    pub(crate) timeout: Duration,
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) gate: Arc<dyn Gate>,
    /// The tool declares an output schema (so its answers carry a structured value).
    pub(crate) structured: bool,
    /// The connection's oversized answers.
    pub(crate) spills: Arc<Spills>,
    pub(crate) store: Option<OutputStore>,
}

/// `tool` of the server as a dynamic tool calling it through `remote`; an error names what is
/// wrong with its schemas.
pub(crate) fn tool(tool: &rmcp::model::Tool, remote: Remote) -> Result<Tool, String> {
    let description = tool
        .description
        .as_deref()
        .or(tool.title.as_deref())
        .unwrap_or_default()
        .to_owned();
    let input = Value::Object((*tool.input_schema).clone());
    let annotations = tool.annotations.as_ref();
    let read_only = annotations.and_then(|a| a.read_only_hint) == Some(true);
    let remote = Arc::new(remote);
    let mut built = Tool::dynamic_rendered(description, input, move |input, ctx| {
        let remote = Arc::clone(&remote);
        async move { call(&remote, input, ctx).await }
    });
    if let Some(output) = &tool.output_schema {
        built = built.output_schema(Value::Object((**output).clone()));
    }
    let built = built.build().map_err(|err| err.to_string())?;
    // A server's own word that a tool only reads lets its calls run beside other reads; every
    // other tool runs alone, as a tool that declares nothing does.
    Ok(if read_only {
        built.with_class(ToolClass::OpenWorld)
    } else {
        built
    })
}

async fn call(remote: &Remote, input: Value, ctx: Context) -> Result<Rendered<Value>, ToolError> {
    remote
        .gate
        .check(
            GateRequest {
                name: &remote.name,
                server: &remote.server,
                tool: &remote.original,
                destructive: remote.destructive,
                input: &input,
            },
            &ctx,
        )
        .await?;
    let mut params = CallToolRequestParams::new(remote.original.clone());
    params.arguments = match input {
        Value::Object(map) => Some(map),
        Value::Null => None,
        other => {
            return Err(ToolError::failure(format!(
                "Invalid tool input: expected an object, got {other}"
            )));
        }
    };
    // Dropping the request future (cancelled, timed out) tells the server to stop.
    let result = tokio::select! {
        biased;
        () = ctx.cancel.cancelled() => return Err(ToolError::Halt(Halt::Cancelled)),
        result = tokio::time::timeout(remote.timeout, remote.peer.call_tool(params)) => result,
    };
    match result {
        Err(_) => Err(ToolError::failure(format!(
            "MCP server {} did not answer {} within {} ms",
            remote.server,
            remote.original,
            remote.timeout.as_millis()
        ))),
        Ok(Err(err)) => Err(ToolError::failure(format!(
            "MCP server {} failed to run {}: {err}",
            remote.server, remote.original
        ))),
        Ok(Ok(result)) => match spilled(&result).and_then(|token| remote.spills.take(token)) {
            Some(answer) => oversized(remote, answer, &ctx).await,
            None => render(result),
        },
    }
}

/// The spill an answer stands for, when the pump put it in place of an oversized one.
fn spilled(result: &CallToolResult) -> Option<u64> {
    let meta = serde_json::to_value(result.meta.as_ref()?).ok()?;
    meta.get(META_KEY)?.as_u64()
}

/// An answer too large for one message: its text saved whole as a managed output of the call,
/// the model reading its ends and the reference.
async fn oversized(
    remote: &Remote,
    answer: Oversized,
    ctx: &Context,
) -> Result<Rendered<Value>, ToolError> {
    let what = format!(
        "MCP server {} answered {} with a message of {} bytes, over the {LIMIT}-byte limit of one message",
        remote.server, remote.original, answer.message_bytes
    );
    let Some(store) = remote.store.clone() else {
        return Err(ToolError::failure(format!("{what}; it was not kept")));
    };
    let Oversized {
        mut file,
        head,
        tail,
        text_bytes,
        is_error,
        ..
    } = answer;
    let (session, call) = (ctx.session_id.clone(), ctx.tool_call_id.clone());
    let saved = tokio::task::spawn_blocking(move || store.save_stream(&session, &call, &mut file))
        .await
        .map_err(|err| ToolError::failure(format!("{what}; saving it failed: {err}")))?
        .map_err(|err| ToolError::failure(format!("{what}; saving it failed: {err}")))?;
    let text = if text_bytes as usize <= head.len() {
        format!(
            "{}\n[{what}; only its text is shown, all of it, saved as {saved}]",
            String::from_utf8_lossy(&head)
        )
    } else {
        // The ends within the call's budget, as settle would show them.
        let lines = ctx.budget.max_lines * 2 / 5;
        let bytes = ctx.budget.max_bytes * 2 / 5;
        let head = ends(&String::from_utf8_lossy(&head), lines, bytes, false);
        let tail = ends(&String::from_utf8_lossy(&tail), lines, bytes, true);
        let omitted = text_bytes - (head.len() + tail.len()) as u64;
        format!(
            "{head}\n[{what}. {omitted} of its {text_bytes} bytes of text are not shown; the whole text is saved as {saved}]\n{tail}"
        )
    };
    if is_error {
        return Err(ToolError::failure(text));
    }
    if remote.structured {
        // The structured value the tool's output schema promises was in the message too, and
        // cannot be rebuilt: a failure the model reads, with the text and where it is.
        return Err(ToolError::failure(format!(
            "{text}\n[The structured value its output schema requires could not be kept.]"
        )));
    }
    Ok(Rendered::new(Value::Null, vec![Content::Text(text)]))
}

/// At most `lines` lines and `bytes` bytes of `text`, from its start or its end; a line cut
/// by the byte limit is left out when there is another.
fn ends(text: &str, lines: usize, bytes: usize, from_end: bool) -> String {
    let part = if from_end {
        let mut start = text.len() - text.len().min(bytes);
        while !text.is_char_boundary(start) {
            start += 1;
        }
        let part = &text[start..];
        match part.split_once('\n') {
            Some((_, whole)) if start > 0 && !whole.is_empty() => whole,
            _ => part,
        }
    } else {
        let mut cut = text.len().min(bytes);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let part = &text[..cut];
        match part.rsplit_once('\n') {
            Some((whole, _)) if cut < text.len() && !whole.is_empty() => whole,
            _ => part,
        }
    };
    let all: Vec<&str> = part.lines().collect();
    let kept = if from_end {
        &all[all.len().saturating_sub(lines)..]
    } else {
        &all[..all.len().min(lines)]
    };
    kept.join("\n")
}

/// A server's result as the value the output schema checks and the content the model reads:
/// text as text, images and blobs as files, text resources as text; `isError` is a failure
/// the model reads.
pub(crate) fn render(result: CallToolResult) -> Result<Rendered<Value>, ToolError> {
    let mut content = Vec::with_capacity(result.content.len());
    for block in result.content {
        content.push(part(block));
    }
    if result.is_error == Some(true) {
        let text: Vec<&str> = content
            .iter()
            .filter_map(|part| match part {
                Content::Text(text) => Some(text.as_str()),
                Content::File { .. } => None,
            })
            .collect();
        let message = if text.is_empty() {
            "The tool reported an error without a message".to_owned()
        } else {
            text.join("\n")
        };
        return Err(ToolError::failure(message));
    }
    let structured = result.structured_content.unwrap_or(Value::Null);
    if content.is_empty() && !structured.is_null() {
        // A result with only a structured value: the model reads the value.
        content.push(Content::Text(structured.to_string()));
    }
    Ok(Rendered::new(structured, content))
}

/// One part; a kind newer than this client is read by the model as the server sent it.
fn part(block: ContentBlock) -> Content {
    match block {
        ContentBlock::Text(text) => Content::Text(text.text),
        ContentBlock::Image(image) => file(&image.mime_type, &image.data, None),
        ContentBlock::Audio(audio) => file(&audio.mime_type, &audio.data, None),
        ContentBlock::Resource(embedded) => match embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                Content::Text(format!("Resource {uri}:\n{text}"))
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => file(
                mime_type.as_deref().unwrap_or("application/octet-stream"),
                &blob,
                Some(uri),
            ),
            other => Content::Text(serde_json::to_string(&other).unwrap_or_default()),
        },
        ContentBlock::ResourceLink(link) => {
            Content::Text(format!("Resource link: {} ({})", link.uri, link.name))
        }
        other => Content::Text(serde_json::to_string(&other).unwrap_or_default()),
    }
}

/// A base64 part as a file the model receives, or a note when it cannot be one: files are
/// carried inline and never cut, so one over the store's inline limit is replaced by its size.
fn file(mime: &str, base64: &str, name: Option<String>) -> Content {
    // The decoded size is known before decoding: never allocate for a part that is refused.
    let decoded = base64.len() / 4 * 3;
    if decoded > MAX_INLINE_MEDIA_BYTES + 3 {
        return Content::Text(format!(
            "[{mime} of about {decoded} bytes left out: over the {MAX_INLINE_MEDIA_BYTES}-byte limit of an inline file]"
        ));
    }
    match base64::engine::general_purpose::STANDARD.decode(base64) {
        Ok(data) if data.len() <= MAX_INLINE_MEDIA_BYTES => Content::File {
            mime: mime.to_owned(),
            data,
            name,
        },
        Ok(data) => Content::Text(format!(
            "[{mime} of {} bytes left out: over the {MAX_INLINE_MEDIA_BYTES}-byte limit of an inline file]",
            data.len()
        )),
        Err(err) => Content::Text(format!("[{mime} that is not valid base64: {err}]")),
    }
}
