//! The Exa-style and Parallel-style providers: one JSON-RPC `tools/call` POST each (WS3),
//! a 25 s timeout, a 256 KiB response cap (WS4) and the JSON-or-SSE response parsing (WS5).
//!
//! API keys live in [`ApiKey`], which has no `Display` and a redacted `Debug`, and errors are
//! built from this module's own texts (never from a request error's text, which names the
//! URL), with the key scrubbed from anything a provider sends back.

use std::fmt;
use std::time::Duration;

use reqwest::Client;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, USER_AGENT};
use serde_json::{Value, json};
use url::Url;

use super::{SearchError, SearchFuture, SearchProvider, SearchRequest};
use crate::web::response::read_capped;

/// The Exa MCP endpoint.
pub const EXA_URL: &str = "https://mcp.exa.ai/mcp";
/// The Parallel MCP endpoint.
pub const PARALLEL_URL: &str = "https://search.parallel.ai/mcp";
/// Responses larger than this are refused (WS4).
pub const MAX_RESPONSE_BYTES: usize = 256 * 1024;
/// Every provider request times out after this long.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(25);
/// What MCP search endpoints are sent as Accept.
const ACCEPT_RPC: &str = "application/json, text/event-stream";

/// A provider API key. It is never displayed: `Debug` prints `ApiKey(***)`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps `key`; `None` for an empty or blank key.
    pub fn new(key: impl Into<String>) -> Option<Self> {
        let key = key.into();
        (!key.trim().is_empty()).then(|| Self(key.trim().to_owned()))
    }

    fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

fn client() -> Result<Client, SearchError> {
    Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(|_| SearchError::new("cannot build the HTTP client"))
}

/// Posts one JSON-RPC `tools/call` and returns the first non-empty text, if any.
async fn call_tool(
    request: reqwest::RequestBuilder,
    tool: &str,
    arguments: Value,
    key: Option<&ApiKey>,
) -> Result<Option<String>, SearchError> {
    let body = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    });
    let scrub = |text: String| match key {
        Some(key) => text.replace(key.expose(), "***"),
        None => text,
    };
    let mut response = request
        .header(ACCEPT, ACCEPT_RPC)
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|err| SearchError::new(scrub(request_problem(&err))))?;
    let status = response.status();
    if !status.is_success() {
        return Err(SearchError::new(format!(
            "the search provider answered HTTP {status}"
        )));
    }
    let (bytes, over) = read_capped(&mut response, MAX_RESPONSE_BYTES)
        .await
        .map_err(|err| SearchError::new(scrub(request_problem(&err))))?;
    if over {
        return Err(SearchError::new(format!(
            "the response is larger than {MAX_RESPONSE_BYTES} bytes"
        )));
    }
    parse_response(&String::from_utf8_lossy(&bytes)).map_err(|err| SearchError::new(scrub(err.0)))
}

/// A request error as text, without the URL (which can carry the Exa key).
fn request_problem(err: &reqwest::Error) -> String {
    if err.is_timeout() {
        return format!(
            "the request timed out after {} seconds",
            REQUEST_TIMEOUT.as_secs()
        );
    }
    let mut cause: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    let mut innermost = None;
    while let Some(current) = cause {
        innermost = Some(current.to_string());
        cause = current.source();
    }
    let what = if err.is_connect() {
        "cannot connect to the search provider"
    } else {
        "the request failed"
    };
    match innermost {
        Some(cause) => format!("{what}: {cause}"),
        None => what.to_owned(),
    }
}

/// WS5: a JSON-RPC result, or the first SSE `data:` frame that is one; `None` when no content
/// item has text.
pub fn parse_response(body: &str) -> Result<Option<String>, SearchError> {
    let body = body.trim();
    if body.is_empty() {
        return Ok(None);
    }
    if body.starts_with('{') {
        let value: Value = serde_json::from_str(body)
            .map_err(|err| SearchError::new(format!("the response is not valid JSON: {err}")))?;
        return rpc_text(&value);
    }
    for line in body.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        // Frames that are not JSON (`[DONE]`, keep-alives) are skipped.
        let Ok(value) = serde_json::from_str::<Value>(data.trim()) else {
            continue;
        };
        if let Some(text) = rpc_text(&value)? {
            return Ok(Some(text));
        }
    }
    Ok(None)
}

fn rpc_text(value: &Value) -> Result<Option<String>, SearchError> {
    if let Some(error) = value.get("error") {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("an unknown error");
        return Err(SearchError::new(format!(
            "the search provider reported: {message}"
        )));
    }
    let items = value
        .pointer("/result/content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    Ok(items
        .iter()
        .filter_map(|item| item.get("text").and_then(Value::as_str))
        .find(|text| !text.is_empty())
        .map(str::to_owned))
}

/// The Exa MCP search (`web_search_exa`); the key travels as the `exaApiKey` query parameter.
#[derive(Debug, Clone)]
pub struct ExaProvider {
    endpoint: String,
    key: Option<ApiKey>,
}

impl ExaProvider {
    /// The public endpoint, with `key` if there is one.
    pub fn new(key: Option<ApiKey>) -> Self {
        Self {
            endpoint: EXA_URL.to_owned(),
            key,
        }
    }

    /// The same provider talking to `endpoint`.
    #[must_use]
    pub fn with_endpoint(mut self, endpoint: Url) -> Self {
        self.endpoint = endpoint.into();
        self
    }

    /// The request URL: the endpoint with `exaApiKey=<form-encoded key>` when keyed.
    pub fn request_url(&self) -> Result<Url, SearchError> {
        let mut url = endpoint_url(&self.endpoint)?;
        if let Some(key) = &self.key {
            url.query_pairs_mut().append_pair("exaApiKey", key.expose());
        }
        Ok(url)
    }

    /// The JSON-RPC arguments for `request`.
    pub fn arguments(request: &SearchRequest) -> Value {
        let mut arguments = json!({
            "query": request.query,
            "type": request.search_type,
            "numResults": request.num_results,
            "livecrawl": request.livecrawl,
        });
        if let (Some(max), Some(map)) = (request.context_max_characters, arguments.as_object_mut())
        {
            map.insert("contextMaxCharacters".to_owned(), json!(max));
        }
        arguments
    }
}

fn endpoint_url(endpoint: &str) -> Result<Url, SearchError> {
    Url::parse(endpoint)
        .map_err(|err| SearchError::new(format!("the endpoint is not a valid URL ({err})")))
}

impl SearchProvider for ExaProvider {
    fn name(&self) -> &str {
        "exa"
    }

    fn search<'a>(&'a self, request: &'a SearchRequest) -> SearchFuture<'a> {
        Box::pin(async move {
            let client = client()?;
            let post = client.post(self.request_url()?);
            call_tool(
                post,
                "web_search_exa",
                Self::arguments(request),
                self.key.as_ref(),
            )
            .await
        })
    }
}

/// The Parallel MCP search (`web_search`); the key travels as a Bearer token.
#[derive(Debug, Clone)]
pub struct ParallelProvider {
    endpoint: String,
    key: Option<ApiKey>,
}

impl ParallelProvider {
    /// The public endpoint, with `key` if there is one.
    pub fn new(key: Option<ApiKey>) -> Self {
        Self {
            endpoint: PARALLEL_URL.to_owned(),
            key,
        }
    }

    /// The same provider talking to `endpoint`.
    #[must_use]
    pub fn with_endpoint(mut self, endpoint: Url) -> Self {
        self.endpoint = endpoint.into();
        self
    }

    /// The JSON-RPC arguments for `request`.
    pub fn arguments(request: &SearchRequest) -> Value {
        json!({
            "objective": request.query,
            "search_queries": [request.query],
            "session_id": request.session_id,
        })
    }
}

impl SearchProvider for ParallelProvider {
    fn name(&self) -> &str {
        "parallel"
    }

    fn search<'a>(&'a self, request: &'a SearchRequest) -> SearchFuture<'a> {
        Box::pin(async move {
            let client = client()?;
            let mut post = client
                .post(endpoint_url(&self.endpoint)?)
                .header(USER_AGENT, concat!("tackle/", env!("CARGO_PKG_VERSION")));
            if let Some(key) = &self.key {
                post = post.header(AUTHORIZATION, format!("Bearer {}", key.expose()));
            }
            call_tool(
                post,
                "web_search",
                Self::arguments(request),
                self.key.as_ref(),
            )
            .await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_never_printed() {
        let key = ApiKey::new("sk-secret").unwrap();
        assert_eq!(format!("{key:?}"), "ApiKey(***)");
        let exa = ExaProvider::new(Some(key));
        assert!(!format!("{exa:?}").contains("sk-secret"));
        assert!(ApiKey::new("  ").is_none());
    }

    #[test]
    fn exa_key_is_form_encoded() {
        let exa = ExaProvider::new(ApiKey::new("exa secret"));
        assert_eq!(
            exa.request_url().unwrap().as_str(),
            "https://mcp.exa.ai/mcp?exaApiKey=exa+secret"
        );
        assert_eq!(
            ExaProvider::new(None).request_url().unwrap().as_str(),
            EXA_URL
        );
    }

    #[test]
    fn parses_json_and_sse() {
        let json =
            r#"{"result":{"content":[{"type":"text","text":""},{"type":"text","text":"found"}]}}"#;
        assert_eq!(parse_response(json).unwrap().as_deref(), Some("found"));
        let sse = format!("event: message\ndata: [DONE]\ndata: {json}\n\n");
        assert_eq!(parse_response(&sse).unwrap().as_deref(), Some("found"));
        assert_eq!(parse_response("  ").unwrap(), None);
        assert_eq!(parse_response("data: [DONE]\n").unwrap(), None);
        assert_eq!(
            parse_response(r#"{"result":{"content":[]}}"#).unwrap(),
            None
        );
        assert!(parse_response("{oops").is_err());
        let error = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"quota"}}"#;
        assert_eq!(
            parse_response(error).unwrap_err().to_string(),
            "the search provider reported: quota"
        );
    }
}
