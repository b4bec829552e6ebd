//! `websearch` against scripted provider endpoints on 127.0.0.1 (reference WS1–WS7).

use std::collections::HashMap;

use serde_json::{Value, json};
use tackle_builtins::web::WebServices;
use tackle_builtins::web::search::{
    ApiKey, ExaProvider, MAX_RESPONSE_BYTES, NO_RESULTS, ParallelProvider, WebSearchConfig,
};
use tackle_tool_core::Tool;
use url::Url;

use super::interactive_support::{
    allowing, builtin, denying, failure, offered, services, settle, settle_in, text,
};

/// The `websearch` tool over `config`'s providers; `None` without one.
fn websearch_tool(
    permission: tackle_permission::Permission,
    config: WebSearchConfig,
) -> Option<Tool> {
    let web = {
        let mut value = WebServices::default();
        value.search = config;
        value
    };
    builtin(&services(permission).with_web(web), "websearch")
}
use super::web_server::{TestServer, ok, respond};

const RESULT: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Rust 1.95 released"}]}}"#;

fn endpoint(server: &TestServer) -> Url {
    Url::parse(&server.url("/mcp")).unwrap()
}

fn exa(server: &TestServer, key: Option<&str>) -> WebSearchConfig {
    let provider = ExaProvider::new(key.and_then(ApiKey::new)).with_endpoint(endpoint(server));
    WebSearchConfig::new().with_provider(provider)
}

fn parallel(server: &TestServer, key: Option<&str>) -> WebSearchConfig {
    let provider = ParallelProvider::new(key.and_then(ApiKey::new)).with_endpoint(endpoint(server));
    WebSearchConfig::new().with_provider(provider)
}

fn tool(config: WebSearchConfig) -> Tool {
    let (permission, _) = allowing();
    websearch_tool(permission, config).unwrap()
}

fn body(server: &TestServer, index: usize) -> Value {
    serde_json::from_slice(&server.requests()[index].body).unwrap()
}

#[tokio::test]
async fn bounds_are_enforced_when_decoding() {
    let server = TestServer::start(|_, _| ok("application/json", RESULT)).await;
    let search = tool(exa(&server, None));
    let zero = failure(settle(&search, "websearch", json!({"query": "q", "numResults": 0})).await);
    let many = failure(
        settle(
            &search,
            "websearch",
            json!({"query": "q", "numResults": 21}),
        )
        .await,
    );
    let context = failure(
        settle(
            &search,
            "websearch",
            json!({"query": "q", "contextMaxCharacters": 50001}),
        )
        .await,
    );
    insta::assert_snapshot!(format!("{zero}\n{many}\n{context}"), @r#"
    Invalid tool input: numResults: expected an integer from 1 to 20, got 0

    Correct the input so that it matches the tool's input schema, then call the tool again.
    Invalid tool input: numResults: expected an integer from 1 to 20, got 21

    Correct the input so that it matches the tool's input schema, then call the tool again.
    Invalid tool input: contextMaxCharacters: expected an integer from 1 to 50000, got 50001

    Correct the input so that it matches the tool's input schema, then call the tool again.
    "#);
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn the_exa_request() {
    let server = TestServer::start(|_, _| ok("application/json", RESULT)).await;
    let (permission, recorder) = allowing();
    let search = websearch_tool(permission, exa(&server, Some("exa secret"))).unwrap();
    let output = settle(
        &search,
        "websearch",
        json!({"query": "rust release", "numResults": 3, "contextMaxCharacters": 1000}),
    )
    .await
    .unwrap();
    assert_eq!(text(&output), "Rust 1.95 released");
    assert_eq!(
        output.structured,
        json!({"provider": "exa", "text": "Rust 1.95 released", "truncated": false})
    );
    let request = &server.requests()[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.target, "/mcp?exaApiKey=exa+secret");
    assert_eq!(
        request.header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    insta::assert_json_snapshot!(body(&server, 0), @r#"
    {
      "jsonrpc": "2.0",
      "id": 1,
      "method": "tools/call",
      "params": {
        "name": "web_search_exa",
        "arguments": {
          "query": "rust release",
          "type": "auto",
          "numResults": 3,
          "livecrawl": "fallback",
          "contextMaxCharacters": 1000
        }
      }
    }
    "#);
    let asked = recorder.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        (
            asked[0].action.as_str(),
            &asked[0].resources,
            &asked[0].save
        ),
        (
            "websearch",
            &vec!["rust release".to_owned()],
            &vec!["*".to_owned()]
        )
    );
    assert_eq!(
        Value::Object(asked[0].metadata.clone()),
        json!({"query": "rust release", "numResults": 3, "contextMaxCharacters": 1000, "provider": "exa"})
    );
    // The key is nowhere in what the model or the host is given.
    let settled = serde_json::to_string(&output).unwrap();
    assert!(!settled.contains("secret"), "{settled}");
}

#[tokio::test]
async fn the_parallel_request() {
    let server = TestServer::start(|_, _| ok("application/json", RESULT)).await;
    let search = tool(parallel(&server, Some("par-secret")));
    let output = settle(
        &search,
        "websearch",
        json!({"query": "rust release", "type": "deep"}),
    )
    .await
    .unwrap();
    assert_eq!(output.structured["provider"], "parallel");
    let request = &server.requests()[0];
    assert_eq!(request.target, "/mcp");
    assert_eq!(request.header("authorization"), Some("Bearer par-secret"));
    assert!(request.header("user-agent").unwrap().starts_with("tackle/"));
    let sent = body(&server, 0);
    assert_eq!(
        sent,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "web_search",
               "arguments": {"objective": "rust release", "search_queries": ["rust release"], "session_id": "s"}}})
    );
    assert!(!sent.to_string().contains("model_name"));
    assert!(
        !serde_json::to_string(&output)
            .unwrap()
            .contains("par-secret")
    );
    // Without a key there is no Authorization header.
    let unkeyed = tool(parallel(&server, None));
    settle(&unkeyed, "websearch", json!({"query": "q"}))
        .await
        .unwrap();
    assert_eq!(server.requests()[1].header("authorization"), None);
}

#[tokio::test]
async fn responses_json_sse_and_empty() {
    let server = TestServer::start(
        |request, _| match request.target.split('?').next().unwrap() {
            "/sse" => ok(
                "text/event-stream",
                format!("event: message\ndata: [DONE]\ndata: {RESULT}\n\n"),
            ),
            "/empty" => ok("application/json", ""),
            "/big" => ok("application/json", vec![b' '; MAX_RESPONSE_BYTES + 1]),
            "/fail" => respond(
                "401 Unauthorized",
                &[("Content-Type", "application/json")],
                "{}",
            ),
            "/echo" => ok(
                "application/json",
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"bad key k-secret-1"}}"#,
            ),
            _ => ok("application/json", RESULT),
        },
    )
    .await;
    let at = |path: &str| {
        let provider = ExaProvider::new(ApiKey::new("k-secret-1"))
            .with_endpoint(Url::parse(&server.url(path)).unwrap());
        tool(WebSearchConfig::new().with_provider(provider))
    };
    let sse = settle(&at("/sse"), "websearch", json!({"query": "q"}))
        .await
        .unwrap();
    assert_eq!(text(&sse), "Rust 1.95 released");
    let empty = settle(&at("/empty"), "websearch", json!({"query": "q"}))
        .await
        .unwrap();
    assert_eq!(text(&empty), NO_RESULTS);
    let big = failure(settle(&at("/big"), "websearch", json!({"query": "too much"})).await);
    let unauthorized = failure(settle(&at("/fail"), "websearch", json!({"query": "q"})).await);
    let echoed = failure(settle(&at("/echo"), "websearch", json!({"query": "q"})).await);
    insta::assert_snapshot!(format!("{big}\n{unauthorized}\n{echoed}"), @r"
    Unable to search the web for too much: the response is larger than 262144 bytes
    Unable to search the web for q: the search provider answered HTTP 401 Unauthorized
    Unable to search the web for q: the search provider reported: bad key ***
    ");
    // A provider that cannot be reached: the error names no URL, hence no key.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let provider = ExaProvider::new(ApiKey::new("k-secret-1"))
            .with_endpoint(Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap());
        tool(WebSearchConfig::new().with_provider(provider))
    };
    let unreachable = failure(settle(&closed, "websearch", json!({"query": "q"})).await);
    assert!(
        unreachable.starts_with("Unable to search the web for q: cannot connect"),
        "{unreachable}"
    );
    assert!(
        !unreachable.contains("k-secret-1") && !unreachable.contains("exaApiKey"),
        "{unreachable}"
    );
}

#[tokio::test]
async fn a_denied_search_sends_nothing() {
    let server = TestServer::start(|_, _| ok("application/json", RESULT)).await;
    let (permission, _) = denying("websearch");
    let search = websearch_tool(permission, exa(&server, None)).unwrap();
    let message = failure(settle(&search, "websearch", json!({"query": "q"})).await);
    assert!(
        message.starts_with("Unable to search the web for q: Permission denied: websearch"),
        "{message}"
    );
    assert!(server.requests().is_empty());
}

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |key| map.get(key).cloned()
}

fn picked(config: &WebSearchConfig, session: &str) -> String {
    config.select(session).unwrap().name().to_owned()
}

#[test]
fn provider_selection() {
    assert!(WebSearchConfig::from_env(env(&[])).is_empty());
    let exa_only = WebSearchConfig::from_env(env(&[("OPENCODE_ENABLE_EXA", "1")]));
    assert_eq!(exa_only.provider_names(), ["exa"]);
    assert_eq!(picked(&exa_only, "any"), "exa");
    let both = WebSearchConfig::from_env(env(&[
        ("OPENCODE_ENABLE_EXA", "true"),
        ("OPENCODE_ENABLE_PARALLEL", "1"),
    ]));
    assert_eq!(picked(&both, "any"), "parallel");
    let forced = WebSearchConfig::from_env(env(&[
        ("OPENCODE_ENABLE_PARALLEL", "1"),
        ("EXA_API_KEY", "k"),
        ("TACKLE_WEBSEARCH_PROVIDER", "exa"),
    ]));
    assert_eq!(picked(&forced, "any"), "exa");
    let keys = WebSearchConfig::from_env(env(&[("EXA_API_KEY", "a"), ("PARALLEL_API_KEY", "b")]));
    assert_eq!(keys.provider_names(), ["exa", "parallel"]);
    // Without a preference each session keeps one provider, and sessions are spread.
    let mut seen = std::collections::HashSet::new();
    for index in 0..32 {
        let session = format!("ses_{index}");
        let first = picked(&keys, &session);
        assert_eq!(picked(&keys, &session), first);
        seen.insert(first);
    }
    assert_eq!(seen.len(), 2);
    let off = WebSearchConfig::from_env(env(&[("OPENCODE_ENABLE_EXA", "0"), ("EXA_API_KEY", " ")]));
    assert!(off.is_empty());
}

#[tokio::test]
async fn the_session_id_reaches_parallel() {
    let server = TestServer::start(|_, _| ok("application/json", RESULT)).await;
    let search = tool(parallel(&server, None));
    settle_in(&search, "websearch", json!({"query": "q"}), "ses_42")
        .await
        .unwrap();
    assert_eq!(
        body(&server, 0)["params"]["arguments"]["session_id"],
        "ses_42"
    );
}

#[test]
fn hidden_without_a_provider() {
    let (permission, _) = allowing();
    assert!(websearch_tool(permission.clone(), WebSearchConfig::new()).is_none());
    let web = |names: Vec<String>| -> Vec<String> {
        names.into_iter().filter(|n| n.starts_with("web")).collect()
    };
    assert_eq!(web(offered(&services(permission.clone()))), ["webfetch"]);
    let configured = {
        let mut value = WebServices::default();
        value.search = WebSearchConfig::new().with_provider(ExaProvider::new(None));
        value
    };
    let names = web(offered(&services(permission).with_web(configured)));
    assert_eq!(names, ["webfetch", "websearch"]);
}

#[test]
fn the_definition() {
    let (permission, _) = allowing();
    let search = websearch_tool(
        permission,
        WebSearchConfig::new().with_provider(ExaProvider::new(None)),
    )
    .unwrap();
    let definition = search.definition("websearch").unwrap();
    assert!(definition.description.contains("The current year is 20"));
    let year = regex_free_year(&definition.description);
    let shown = definition.description.replace(&year, "<year>");
    insta::assert_snapshot!(shown);
    insta::assert_json_snapshot!(definition.input_schema);
}

/// The four digits after "The current year is ".
fn regex_free_year(text: &str) -> String {
    let at = text.find("The current year is ").unwrap() + "The current year is ".len();
    text[at..at + 4].to_owned()
}
