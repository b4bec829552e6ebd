//! `webfetch` against scripted servers on loopback addresses (reference WF1–WF8, and
//! the SSRF guard).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tackle_builtins::web::{
    BROWSER_USER_AGENT, FetchFormat, FetchInput, MAX_RESPONSE_BYTES, TRUNCATION_NOTICE, WebAccess,
};
use tackle_permission::{Effect, Permission, Rule, Ruleset, SavedApprovals};
use tackle_tool_core::Tool;

use super::interactive_support::{
    Recorder, allowing, built, failure, permission_with, services, settle, text,
};

/// The `webfetch` tool reaching what `access` allows.
fn webfetch_tool(permission: Permission, access: WebAccess) -> Tool {
    let web = {
        let mut value = tackle_builtins::web::WebServices::default();
        value.access = access;
        value
    };
    built(&services(permission).with_web(web), "webfetch")
}
use super::web_server::{Step, TestServer, ok, redirect, respond};

fn tool_allowing(entries: &[&str]) -> (Tool, Recorder) {
    let (permission, recorder) = allowing();
    (
        webfetch_tool(permission, WebAccess::from_entries(entries).unwrap()),
        recorder,
    )
}

async fn fetch(
    tool: &Tool,
    input: Value,
) -> Result<tackle_tool_core::ToolOutput, tackle_tool_core::ToolError> {
    settle(tool, "webfetch", input).await
}

#[tokio::test]
async fn decoding_defaults_and_timeout_bounds() {
    let input: FetchInput = serde_json::from_value(json!({"url": "http://example.com"})).unwrap();
    assert_eq!(input.format, FetchFormat::Markdown);
    assert_eq!(input.timeout, None);
    let (tool, recorder) = tool_allowing(&[]);
    let zero = failure(fetch(&tool, json!({"url": "http://example.com", "timeout": 0})).await);
    let over = failure(fetch(&tool, json!({"url": "http://example.com", "timeout": 121})).await);
    let format = failure(fetch(&tool, json!({"url": "http://example.com", "format": "pdf"})).await);
    insta::assert_snapshot!(format!("{zero}\n{over}\n{format}"), @r#"
    Invalid tool input: timeout: expected an integer from 1 to 120, got 0

    Correct the input so that it matches the tool's input schema, then call the tool again.
    Invalid tool input: timeout: expected an integer from 1 to 120, got 121

    Correct the input so that it matches the tool's input schema, then call the tool again.
    Invalid tool input: format: expected one of: markdown, text, html, got "pdf"

    Correct the input so that it matches the tool's input schema, then call the tool again.
    "#);
    assert!(recorder.asked().is_empty());
}

#[tokio::test]
async fn fetches_plain_text_with_the_reference_headers() {
    let server = TestServer::start(|_, _| ok("text/plain", "hello")).await;
    let (tool, recorder) = tool_allowing(&["127.0.0.1"]);
    let url = server.url("/public");
    let input = json!({"url": url, "format": "text", "timeout": 4});
    let output = fetch(&tool, input.clone()).await.unwrap();
    assert_eq!(
        output.structured,
        json!({"url": url, "finalUrl": url, "contentType": "text/plain", "format": "text",
               "output": "hello", "truncated": false})
    );
    assert_eq!(text(&output), "hello");
    let asked = recorder.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        (
            asked[0].action.as_str(),
            &asked[0].resources,
            &asked[0].save
        ),
        ("webfetch", &vec![url.clone()], &vec!["*".to_owned()])
    );
    assert_eq!(Value::Object(asked[0].metadata.clone()), input);
    let request = &server.requests()[0];
    assert_eq!(request.method, "GET");
    assert_eq!(request.target, "/public");
    assert!(
        request
            .header("accept")
            .unwrap()
            .starts_with("text/plain;q=1.0")
    );
    assert_eq!(request.header("user-agent"), Some(BROWSER_USER_AGENT));
    assert_eq!(request.header("accept-language"), Some("en-US,en;q=0.9"));
}

#[tokio::test]
async fn accept_headers_follow_the_format() {
    let server = TestServer::start(|_, _| ok("text/plain", "x")).await;
    let (tool, _) = tool_allowing(&["127.0.0.1"]);
    for format in ["markdown", "html"] {
        fetch(&tool, json!({"url": server.url("/"), "format": format}))
            .await
            .unwrap();
    }
    let accepts: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.header("accept").unwrap().to_owned())
        .collect();
    assert_eq!(
        accepts,
        [FetchFormat::Markdown.accept(), FetchFormat::Html.accept()]
    );
}

#[tokio::test]
async fn html_is_converted() {
    let page = "<h1>Hello</h1><script>bad()</script><p>world <strong>wide</strong></p><style>.bad {}</style>";
    let server = TestServer::start(move |_, _| ok("text/html; charset=utf-8", page)).await;
    let (tool, _) = tool_allowing(&["127.0.0.1"]);
    let markdown = fetch(&tool, json!({"url": server.url("/")})).await.unwrap();
    assert_eq!(text(&markdown), "# Hello\n\nworld **wide**");
    let plain = fetch(&tool, json!({"url": server.url("/"), "format": "text"}))
        .await
        .unwrap();
    assert_eq!(text(&plain), "Hello\n\nworld wide");
    let html = fetch(&tool, json!({"url": server.url("/"), "format": "html"}))
        .await
        .unwrap();
    assert_eq!(text(&html), page);
}

#[tokio::test]
async fn a_local_address_is_asked_about_every_time_by_its_origin() {
    let server = TestServer::start(|_, _| ok("text/plain", "secret")).await;
    let (tool, recorder) = tool_allowing(&[]);
    let origin = format!("http://127.0.0.1:{}", server.port());
    assert_eq!(
        text(&fetch(&tool, json!({"url": server.url("/")})).await.unwrap()),
        "secret"
    );
    // A name is asked about too, and again: an answer covers one call.
    let url = format!("http://localhost:{}/", server.port());
    assert_eq!(
        text(&fetch(&tool, json!({"url": url})).await.unwrap()),
        "secret"
    );
    let asked = recorder.asked();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0].resources, [origin]);
    assert_eq!(
        asked[1].resources,
        [format!("http://localhost:{}", server.port())]
    );
    assert!(
        asked
            .iter()
            .all(|request| request.always_ask && request.action == "webfetch")
    );
    assert_eq!(asked[0].metadata["url"], server.url("/"));

    // Declined: nothing reaches the server.
    let before = server.requests().len();
    let (permission, _) = permission_with(tackle_permission::Reply::Reject { message: None }, &[]);
    let declining = webfetch_tool(permission, WebAccess::new());
    let result = fetch(&declining, json!({"url": server.url("/")})).await;
    assert!(matches!(
        result,
        Err(tackle_tool_core::ToolError::Halt(
            tackle_tool_core::Halt::Declined
        ))
    ));
    // A configured deny on the origin refuses without asking.
    let (denying, denied) = permission_with(tackle_permission::Reply::Once, &["webfetch"]);
    let message = failure(
        fetch(
            &webfetch_tool(denying, WebAccess::new()),
            json!({"url": server.url("/")}),
        )
        .await,
    );
    assert!(message.contains("Permission denied"), "{message}");
    assert!(denied.asked().is_empty());
    assert_eq!(server.requests().len(), before);

    // Allowed by the configuration: fetched without asking.
    let (allowed, quiet) = tool_allowing(&["127.0.0.0/8"]);
    assert_eq!(
        text(
            &fetch(&allowed, json!({"url": server.url("/")}))
                .await
                .unwrap()
        ),
        "secret"
    );
    assert!(quiet.asked().iter().all(|request| !request.always_ask));
}

#[tokio::test]
async fn metadata_and_link_local_addresses_are_never_reached() {
    // Even an allow-list naming them does not open them.
    let (tool, recorder) = tool_allowing(&["169.254.0.0/16", "fe80::/10", "fd00::/8"]);
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
        "http://[fe80::1]/",
        "http://[::ffff:169.254.169.254]/",
    ] {
        let message = failure(fetch(&tool, json!({"url": url})).await);
        assert!(
            message.ends_with("which webfetch never reaches"),
            "{message}"
        );
    }
    assert!(recorder.asked().is_empty());
    insta::assert_snapshot!(
        failure(fetch(&tool, json!({"url": "http://169.254.169.254/"})).await),
        @"Unable to fetch http://169.254.169.254/: 169.254.169.254 is a link-local address (cloud metadata endpoints live there), which webfetch never reaches"
    );
}

#[tokio::test]
async fn a_redirect_to_another_local_origin_is_asked_again_or_refused() {
    let target = TestServer::start(|_, _| ok("text/plain", "inner")).await;
    let inner = target.url("/");
    let server = TestServer::start(move |_, _| redirect(&inner)).await;
    // Same address, another port: asked about again, every time.
    let (tool, recorder) = tool_allowing(&[]);
    let url = format!("http://localhost:{}/", server.port());
    assert_eq!(
        text(&fetch(&tool, json!({"url": url})).await.unwrap()),
        "inner"
    );
    let asked = recorder.asked();
    assert_eq!(asked.len(), 2);
    assert_eq!(
        asked[1].resources,
        [format!("http://127.0.0.1:{}", target.port())]
    );
    assert!(asked[1].always_ask);
    // Another local address than the approved one: refused, naming the setting.
    let elsewhere = format!("http://127.0.0.2:{}/", target.port());
    let hop = TestServer::start(move |_, _| redirect(&elsewhere)).await;
    let message = failure(fetch(&tool, json!({"url": hop.url("/")})).await);
    assert!(
        message.ends_with(
            "127.0.0.2 is a loopback address, which webfetch reaches only when the user approves \
             the call or `webfetch.allow` in the configuration (tackle.json) lists it"
        ),
        "{message}"
    );
}

#[tokio::test]
async fn a_same_host_redirect_is_followed_without_asking_again() {
    let server = TestServer::start(|request, _| match request.target.as_str() {
        "/start" => redirect("/final"),
        _ => ok("text/plain", "arrived"),
    })
    .await;
    let (tool, recorder) = tool_allowing(&["127.0.0.1"]);
    let output = fetch(&tool, json!({"url": server.url("/start")}))
        .await
        .unwrap();
    assert_eq!(text(&output), "arrived");
    assert_eq!(output.structured["finalUrl"], server.url("/final"));
    assert_eq!(output.structured["url"], server.url("/start"));
    assert_eq!(recorder.summary().len(), 1);
    assert_eq!(recorder.asked()[0].resources, [server.url("/start")]);
}

#[tokio::test]
async fn a_redirect_to_another_host_is_asserted_again() {
    let target = TestServer::start(|_, _| ok("text/plain", "other host")).await;
    let other = format!("http://localhost:{}/landing", target.port());
    let hop = other.clone();
    let server = TestServer::start(move |_, _| redirect(&hop)).await;
    let (tool, recorder) = tool_allowing(&["127.0.0.1", "localhost"]);
    let output = fetch(&tool, json!({"url": server.url("/go")}))
        .await
        .unwrap();
    assert_eq!(text(&output), "other host");
    let asked = recorder.asked();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[1].resources, [other]);
    assert_eq!(asked[1].metadata["redirectedFrom"], server.url("/go"));

    // Denying the second host stops before anything is sent to it.
    let rules = Ruleset::new(vec![
        Rule::new("*", "*", Effect::Allow),
        Rule::new("webfetch", "http://localhost*", Effect::Deny),
    ]);
    let (_, idle) = allowing();
    let permission = Permission::new(rules, SavedApprovals::in_memory(), Arc::new(idle));
    let access = WebAccess::from_entries(["127.0.0.1", "localhost"]).unwrap();
    let tool = webfetch_tool(permission, access);
    let before = target.requests().len();
    let message = failure(fetch(&tool, json!({"url": server.url("/go")})).await);
    assert!(
        message.starts_with(&format!(
            "Unable to fetch {}: Permission denied: webfetch",
            server.url("/go")
        )),
        "{message}"
    );
    assert_eq!(target.requests().len(), before);
}

#[tokio::test]
async fn every_redirect_hop_is_checked_by_the_guard() {
    let server = TestServer::start(|request, _| match request.target.as_str() {
        "/metadata" => redirect("http://169.254.169.254/latest/meta-data/iam"),
        "/other-loopback" => redirect("http://127.0.0.2:9/"),
        "/scheme" => redirect("file:///etc/passwd"),
        _ => redirect("/loop"),
    })
    .await;
    let (tool, _) = tool_allowing(&["127.0.0.1"]);
    let metadata = failure(fetch(&tool, json!({"url": server.url("/metadata")})).await);
    assert!(metadata.contains("redirected to http://169.254.169.254/latest/meta-data/iam: 169.254.169.254 is a link-local address"), "{metadata}");
    let other = failure(fetch(&tool, json!({"url": server.url("/other-loopback")})).await);
    assert!(other.contains("127.0.0.2 is a loopback address"), "{other}");
    let scheme = failure(fetch(&tool, json!({"url": server.url("/scheme")})).await);
    assert!(
        scheme.contains("only http:// and https:// URLs can be fetched, not file:"),
        "{scheme}"
    );
    let looping = failure(fetch(&tool, json!({"url": server.url("/loop")})).await);
    assert!(looping.ends_with("more than 10 redirects"), "{looping}");
}

#[tokio::test]
async fn a_redirect_to_a_name_of_a_blocked_address_is_refused_at_connect() {
    let Ok(server) = tokio::time::timeout(
        Duration::from_secs(5),
        TestServer::start_on("127.0.0.2", |_, _| redirect("http://localhost:9/secret")),
    )
    .await
    else {
        panic!("cannot bind 127.0.0.2")
    };
    let (tool, recorder) = tool_allowing(&["127.0.0.2"]);
    let message = failure(fetch(&tool, json!({"url": server.url("/")})).await);
    assert!(message.contains("localhost resolves to"), "{message}");
    // The new host was asked about (it passed the pre-check as a name), then refused.
    assert_eq!(recorder.asked().len(), 2);
}

#[tokio::test]
async fn only_http_and_https() {
    let (tool, recorder) = tool_allowing(&[]);
    let message = failure(fetch(&tool, json!({"url": "file:///etc/passwd"})).await);
    assert_eq!(
        message,
        "Unable to fetch file:///etc/passwd: only http:// and https:// URLs can be fetched, not file:"
    );
    let garbage = failure(fetch(&tool, json!({"url": "not a url"})).await);
    assert_eq!(
        garbage,
        "Unable to fetch not a url: not a valid URL (relative URL without a base)"
    );
    assert!(recorder.asked().is_empty());
}

fn big_body(len: usize) -> Vec<u8> {
    b"0123456789abcdef\n"
        .iter()
        .copied()
        .cycle()
        .take(len)
        .collect()
}

#[tokio::test]
async fn oversized_bodies_are_cut_with_a_notice() {
    let declared =
        TestServer::start(|_, _| ok("text/plain", big_body(MAX_RESPONSE_BYTES + 1024 * 1024)))
            .await;
    let chunked = TestServer::start(|_, _| {
        let mut steps = vec![Step::Write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec(),
        )];
        for _ in 0..6 {
            let mut chunk = format!("{:x}\r\n", 1024 * 1024).into_bytes();
            chunk.extend(big_body(1024 * 1024));
            chunk.extend(b"\r\n");
            steps.push(Step::Write(chunk));
        }
        steps.push(Step::Write(b"0\r\n\r\n".to_vec()));
        steps
    })
    .await;
    let (tool, _) = tool_allowing(&["127.0.0.1"]);
    for server in [&declared, &chunked] {
        let output = fetch(&tool, json!({"url": server.url("/big")}))
            .await
            .unwrap();
        assert_eq!(output.structured["truncated"], true);
        let shown = text(&output);
        assert!(shown.ends_with(TRUNCATION_NOTICE));
        assert_eq!(shown.len(), MAX_RESPONSE_BYTES + TRUNCATION_NOTICE.len());
    }
    let exact = TestServer::start(|_, _| ok("text/plain", big_body(MAX_RESPONSE_BYTES))).await;
    let output = fetch(&tool, json!({"url": exact.url("/")})).await.unwrap();
    assert_eq!(output.structured["truncated"], false);
}

#[tokio::test]
async fn non_textual_content_is_refused() {
    let server = TestServer::start(|request, _| match request.target.as_str() {
        "/png" => ok("image/png", b"\x89PNG\r\n".to_vec()),
        "/pdf" => ok("application/pdf", "%PDF-1.7"),
        "/svg" => ok("image/svg+xml", "<svg/>"),
        "/json" => ok("application/vnd.api+json", "{}"),
        _ => respond("404 Not Found", &[], "nope"),
    })
    .await;
    let (tool, _) = tool_allowing(&["127.0.0.1"]);
    let png = failure(fetch(&tool, json!({"url": server.url("/png")})).await);
    let pdf = failure(fetch(&tool, json!({"url": server.url("/pdf")})).await);
    let missing = failure(fetch(&tool, json!({"url": server.url("/missing")})).await);
    let shown = format!("{png}\n{pdf}\n{missing}").replace(&server.url(""), "http://<server>");
    insta::assert_snapshot!(shown, @r"
    Unable to fetch http://<server>/png: unsupported fetched image content type image/png
    Unable to fetch http://<server>/pdf: unsupported content type application/pdf: only text, HTML, Markdown, JSON and XML can be fetched
    Unable to fetch http://<server>/missing: the server answered HTTP 404 Not Found
    ");
    assert_eq!(
        text(
            &fetch(&tool, json!({"url": server.url("/svg"), "format": "html"}))
                .await
                .unwrap()
        ),
        "<svg/>"
    );
    assert_eq!(
        text(
            &fetch(&tool, json!({"url": server.url("/json")}))
                .await
                .unwrap()
        ),
        "{}"
    );
}

#[tokio::test]
async fn a_cloudflare_challenge_is_retried_once_with_an_honest_agent() {
    let server = TestServer::start(|_, index| {
        if index == 0 {
            respond(
                "403 Forbidden",
                &[("cf-mitigated", "challenge"), ("Content-Type", "text/html")],
                "<p>challenge</p>",
            )
        } else {
            ok("text/plain", "through")
        }
    })
    .await;
    let (tool, _) = tool_allowing(&["127.0.0.1"]);
    let output = fetch(&tool, json!({"url": server.url("/")})).await.unwrap();
    assert_eq!(text(&output), "through");
    let agents: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.header("user-agent").unwrap().to_owned())
        .collect();
    assert_eq!(agents, [BROWSER_USER_AGENT, "opencode"]);

    let plain_403 = TestServer::start(|_, _| respond("403 Forbidden", &[], "no")).await;
    let message = failure(fetch(&tool, json!({"url": plain_403.url("/")})).await);
    assert!(
        message.ends_with("the server answered HTTP 403 Forbidden"),
        "{message}"
    );
    assert_eq!(plain_403.requests().len(), 1);
}

#[tokio::test]
async fn a_stalled_body_times_out() {
    let server = TestServer::start(|request, _| {
        let head =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\npartial"
                .to_vec();
        if request.target == "/headers" {
            vec![Step::Pause(Duration::from_secs(30))]
        } else {
            vec![Step::Write(head), Step::Pause(Duration::from_secs(30))]
        }
    })
    .await;
    let (tool, _) = tool_allowing(&["127.0.0.1"]);
    for path in ["/body", "/headers"] {
        let started = Instant::now();
        let message = failure(fetch(&tool, json!({"url": server.url(path), "timeout": 1})).await);
        let elapsed = started.elapsed();
        assert!(message.ends_with("timed out after 1 seconds"), "{message}");
        assert!(
            // Not before the timeout; long before the server's 30 s pause ends.
            elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(10),
            "{elapsed:?}"
        );
    }
}

/// A page whose conversion outlasts the call's timeout ends the call with the timeout error:
/// the timeout covers the conversion, not only the download.
#[tokio::test]
async fn a_page_slow_to_convert_times_out() {
    // A million nested <div>s (5 MB): each start tag scans the open elements, seconds of
    // parsing even with deep tags dropped. Most of the second goes to the download, so the
    // conversion cannot finish in what is left (and should the download itself run late, the
    // error is the same).
    let page = "<div>".repeat(1_000_000).into_bytes();
    let server = TestServer::start(move |_, _| {
        let mut steps = respond("200 OK", &[("Content-Type", "text/html")], page.clone());
        let Some(Step::Write(bytes)) = steps.pop() else {
            unreachable!("respond writes one step")
        };
        let (first, last) = bytes.split_at(bytes.len() - 1000);
        vec![
            Step::Write(first.to_vec()),
            Step::Pause(Duration::from_millis(850)),
            Step::Write(last.to_vec()),
        ]
    })
    .await;
    let (tool, _) = tool_allowing(&["127.0.0.1"]);
    for format in ["markdown", "text"] {
        let started = Instant::now();
        let message = failure(
            fetch(
                &tool,
                json!({"url": server.url("/"), "format": format, "timeout": 1}),
            )
            .await,
        );
        let elapsed = started.elapsed();
        assert_eq!(
            message,
            format!(
                "Unable to fetch {}: timed out after 1 seconds",
                server.url("/")
            )
        );
        assert!(elapsed < Duration::from_secs(5), "{format}: {elapsed:?}");
    }
}

#[tokio::test]
async fn charsets_are_decoded() {
    let server = TestServer::start(|request, _| match request.target.as_str() {
        "/latin1" => ok("text/plain; charset=ISO-8859-1", b"caf\xe9".to_vec()),
        "/meta" => ok("text/html", b"<html><head><meta charset=\"windows-1252\"><title>t</title></head><body><p>cr\xe8me br\xfbl\xe9e</p></body></html>".to_vec()),
        "/sniffed" => ok("text/plain", b"Le caf\xe9 cr\xe8me br\xfbl\xe9e est tr\xe8s appr\xe9ci\xe9 \xe0 Paris, o\xf9 l'on d\xe9guste.".to_vec()),
        _ => ok("text/plain", "café".as_bytes().to_vec()),
    })
    .await;
    let (tool, _) = tool_allowing(&["127.0.0.1"]);
    let get = |path: &'static str| {
        let tool = tool.clone();
        let url = server.url(path);
        async move { text(&fetch(&tool, json!({"url": url})).await.unwrap()) }
    };
    assert_eq!(get("/latin1").await, "café");
    assert_eq!(get("/meta").await, "crème brûlée");
    assert_eq!(get("/utf8").await, "café");
    assert!(
        get("/sniffed")
            .await
            .starts_with("Le café crème brûlée est très apprécié à Paris")
    );
}

#[tokio::test]
async fn an_empty_javascript_shell_is_not_content() {
    let server = TestServer::start(|_, _| {
        ok(
            "text/html",
            "<html><body><div id=\"root\"></div><script src=\"/app.js\"></script></body></html>",
        )
    })
    .await;
    let (tool, _) = tool_allowing(&["127.0.0.1"]);
    let message = failure(fetch(&tool, json!({"url": server.url("/")})).await);
    assert!(message.ends_with("the page has no readable content (it may need JavaScript, or it blocks automated access)"), "{message}");
}

#[tokio::test]
async fn a_declined_fetch_sends_nothing() {
    let server = TestServer::start(|_, _| ok("text/plain", "x")).await;
    let (permission, _) = permission_with(tackle_permission::Reply::Reject { message: None }, &[]);
    let tool = webfetch_tool(permission, WebAccess::from_entries(["127.0.0.1"]).unwrap());
    let result = fetch(&tool, json!({"url": server.url("/")})).await;
    assert!(
        matches!(
            result,
            Err(tackle_tool_core::ToolError::Halt(
                tackle_tool_core::Halt::Declined
            ))
        ),
        "{result:?}"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn the_definition() {
    let (tool, _) = tool_allowing(&[]);
    let definition = tool.definition("webfetch").unwrap();
    insta::assert_json_snapshot!(definition.as_ref());
}

/// `0.0.0.0` reaches this host on Linux, and multicast and reserved addresses are never what
/// a listed network meant: even an allow-list naming them, or naming everything, opens none.
#[tokio::test]
async fn multicast_and_reserved_addresses_are_never_reached_even_when_listed() {
    let server = TestServer::start(|_, _| ok("text/plain", "local secret")).await;
    let (tool, recorder) = tool_allowing(&[
        "0.0.0.0/0",
        "::/0",
        "0.0.0.0/8",
        "224.0.0.0/4",
        "240.0.0.0/4",
        "ff00::/8",
    ]);
    let mut seen = String::new();
    for url in [
        format!("http://0.0.0.0:{}/", server.port()),
        format!("http://[::ffff:0.0.0.0]:{}/", server.port()),
        format!("http://[2002::1]:{}/", server.port()),
        format!("http://224.0.0.1:{}/", server.port()),
        format!("http://255.255.255.255:{}/", server.port()),
        format!("http://[64:ff9b::f000:1]:{}/", server.port()),
        format!("http://[ff02::1]:{}/", server.port()),
        format!("http://[::]:{}/", server.port()),
    ] {
        let message = failure(fetch(&tool, json!({"url": url})).await);
        seen.push_str(&message.replace(&server.port().to_string(), "[PORT]"));
        seen.push('\n');
    }
    assert!(server.requests().is_empty());
    assert!(recorder.asked().iter().all(|request| !request.always_ask));
    // What the list holds besides is still reached.
    assert_eq!(
        text(&fetch(&tool, json!({"url": server.url("/")})).await.unwrap()),
        "local secret"
    );
    insta::assert_snapshot!(seen);
}
