//! Paging managed outputs through the registry as a model does: every byte of a line longer
//! than a page is reachable by following the hints (`offset` and `column`).

use proptest::prelude::*;
use serde_json::{Value, json};
use tackle_output_store::OutputRef;
use tackle_permission::{Effect, Reply, Rule};
use tackle_registry::{Materialization, Registration};
use tackle_tool_core::{Call, MAX_BYTES, OutputContent, ToolOutput};

use super::support::{Fixture, context};

/// A registry holding every builtin of `fx`'s Location, everything allowed.
struct Host {
    fx: Fixture,
    _registration: Registration,
    snapshot: Materialization,
}

impl Host {
    fn new() -> Self {
        let fx = Fixture::with_rules(Reply::Once, vec![Rule::new("*", "*", Effect::Allow)]);
        let (registration, snapshot) = fx.registered();
        Self {
            fx,
            _registration: registration,
            snapshot,
        }
    }

    /// The model text and structured output of a settled call.
    async fn settle(&self, name: &str, input: Value) -> (String, Value) {
        let settlement = self
            .snapshot
            .settle(&Call::new("c1", name, input.clone()), &context())
            .await
            .unwrap();
        if let tackle_tool_core::ResultValue::Error(message) = settlement.result() {
            let message: String = message.chars().take(500).collect();
            panic!("{name} {input}: {message}");
        }
        let output = settlement.output().unwrap();
        let text = output
            .content
            .iter()
            .filter_map(OutputContent::as_text)
            .collect::<String>();
        (text, output.structured.clone())
    }

    /// Saves `body` as a managed output, as settle does for a large result.
    fn spill(&self, body: &str) -> OutputRef {
        let output = ToolOutput::new(Value::Null, vec![OutputContent::Text { text: body.into() }]);
        let bounded = self
            .fx
            .services
            .store
            .bound("ses_test", "c0", output)
            .unwrap();
        bounded.references[0].clone()
    }

    /// Reads `reference` from the start, following each page's `next` and `nextColumn`, and
    /// joins what the pages show; returns the text and the hints seen.
    async fn read_all(&self, reference: &str) -> (String, Vec<String>) {
        let (mut offset, mut column) = (1u64, 1u64);
        let mut joined = String::new();
        let mut hints = Vec::new();
        for _ in 0..10_000 {
            let input = json!({"path": reference, "offset": offset, "column": column});
            let (text, structured) = self.settle("read", input).await;
            let (lines, hint) = page_lines(&text);
            hints.push(hint);
            for (i, (number, line)) in lines.iter().enumerate() {
                assert_eq!(*number, offset + i as u64, "{text}");
                // A line that starts on this page follows the one before it.
                if (i > 0 || column == 1) && *number > 1 {
                    joined.push('\n');
                }
                joined.push_str(line);
            }
            let next = structured["next"].as_u64();
            let next_column = structured["nextColumn"].as_u64();
            match (next, next_column) {
                (Some(next), Some(next_column)) => (offset, column) = (next, next_column),
                (Some(next), None) => (offset, column) = (next, 1),
                (None, _) => return (joined, hints),
            }
        }
        panic!("paging did not end");
    }
}

/// Panics with where `shown` first differs from `expected` (both may be megabytes).
fn assert_same(shown: &str, expected: &str) {
    if shown == expected {
        return;
    }
    let at = shown
        .bytes()
        .zip(expected.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(shown.len().min(expected.len()));
    let around = |text: &str| {
        let bytes = &text.as_bytes()[at.saturating_sub(40)..text.len().min(at + 40)];
        String::from_utf8_lossy(bytes).into_owned()
    };
    panic!(
        "differs at byte {at} (lengths {} and {}): shown {:?}, expected {:?}",
        shown.len(),
        expected.len(),
        around(shown),
        around(expected)
    );
}

/// The numbered lines of a read page and its hint.
fn page_lines(text: &str) -> (Vec<(u64, String)>, String) {
    let (_, content) = text.split_once("<content>\n").unwrap();
    let (body, rest) = content.rsplit_once("\n\n(").unwrap();
    let hint = format!("({}", rest.trim_end_matches("\n</content>"));
    let lines = body
        .split('\n')
        .map(|line| {
            let (number, line) = line.split_once(": ").unwrap();
            (number.parse().unwrap(), line.to_owned())
        })
        .collect();
    (lines, hint)
}

#[cfg(feature = "bash")]
#[tokio::test]
async fn a_spilled_single_line_is_read_back_whole() {
    let host = Host::new();
    let command = "head -c 200000 /dev/zero | tr '\\0' a";
    let (preview, _) = host.settle("bash", json!({"command": command})).await;
    let reference = preview
        .split_whitespace()
        .find_map(|word| {
            let at = word.find("tool-output://")?;
            Some(
                word[at..]
                    .trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
                    .to_owned(),
            )
        })
        .expect("the preview names its managed output");
    let (joined, hints) = host.read_all(&reference).await;
    // The managed output holds the command's output (200000 bytes, no newline) and the footer.
    let (line, footer) = joined.split_once('\n').unwrap_or((&joined, ""));
    assert_same(line, &"a".repeat(200_000));
    assert!(footer.contains("Command exited with code 0"), "{footer:?}");
    assert!(hints.len() >= 4, "{hints:?}");
    insta::assert_snapshot!(hints[0].replace(&reference, "tool-output://<id>"));
}

#[tokio::test]
async fn a_one_megabyte_line_among_short_ones_is_read_back_byte_for_byte() {
    let host = Host::new();
    let mut body: String = (1..=3000).map(|n| format!("before {n}\n")).collect();
    // Multi-byte characters, so cuts fall next to (never inside) them.
    body.push_str(&"é日😀x".repeat(100_000));
    body.push('\n');
    body.extend((1..=3000).map(|n| format!("after {n}\n")));
    let reference = host.spill(&body).to_string();
    let (joined, hints) = host.read_all(&reference).await;
    assert_same(&joined, body.trim_end_matches('\n'));
    let cut: Vec<&String> = hints.iter().filter(|h| h.contains("column=")).collect();
    assert!(cut.len() >= 15, "{}", cut.len());
    insta::assert_snapshot!(cut[0].as_str());
    insta::assert_snapshot!(cut[1].as_str());
}

fn content() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        6 => "[a-z0-9 ]{0,60}",
        2 => "[é日😀a]{0,80}",
        1 => (50_000usize..120_000, "[bé日😀]").prop_map(|(n, c)| c.repeat(n / c.len())),
    ];
    // One line over the output's byte budget at least (a repeat rounds down by under 4 bytes),
    // so the content is always saved as a managed output.
    let long = (MAX_BYTES + 4..120_000, "[bé日😀]").prop_map(|(n, c)| c.repeat(n / c.len()));
    (
        prop::collection::vec(line, 0..60),
        long,
        any::<prop::sample::Index>(),
    )
        .prop_map(|(mut lines, long, at)| {
            let at = at.index(lines.len() + 1);
            lines.insert(at, long);
            lines.join("\n")
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn concatenated_pages_equal_the_content(body in content()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (joined, _) = runtime.block_on(async {
            let host = Host::new();
            let reference = host.spill(&body).to_string();
            host.read_all(&reference).await
        });
        // A final newline ends the last line; it is not a line of its own.
        assert_same(&joined, body.strip_suffix('\n').unwrap_or(&body));
    }
}

/// The settlement of one call, for tests that look at what the bound did.
async fn settlement(host: &Host, name: &str, input: Value) -> tackle_registry::Settlement {
    host.snapshot
        .settle(&Call::new("c1", name, input), &context())
        .await
        .unwrap()
}

/// Lines as the bound counts them.
fn count(text: &str) -> u64 {
    tackle_tool_core::count_lines(text.as_bytes())
}

#[tokio::test]
async fn a_page_of_a_long_file_is_within_the_bound_frame_included() {
    let host = Host::new();
    // 3000 short lines: the page stops at the line budget less its frame.
    let body: String = (1..=3000).map(|n| format!("line {n}\n")).collect();
    host.fx.put("short.txt", &body);
    let settled = settlement(&host, "read", json!({"path": "short.txt"})).await;
    assert!(!settled.truncated() && settled.references().is_empty());
    let (text, structured) = host.settle("read", json!({"path": "short.txt"})).await;
    assert!(
        count(&text) <= 2000 && text.len() <= MAX_BYTES,
        "{}",
        count(&text)
    );
    let (lines, hint) = page_lines(&text);
    assert_eq!(lines.len(), 1993);
    assert_eq!(structured["next"], json!(1994));
    insta::assert_snapshot!(hint, @"(Showing lines 1-1993 of 3000. Use offset=1994 to continue.)");
    // A file that fits the page's room comes back whole.
    let body: String = (1..=1993).map(|n| format!("line {n}\n")).collect();
    host.fx.put("fits.txt", &body);
    let (text, structured) = host.settle("read", json!({"path": "fits.txt"})).await;
    assert_eq!(page_lines(&text).0.len(), 1993);
    assert_eq!(structured["next"], Value::Null);
}

#[tokio::test]
async fn a_page_of_50_kb_is_not_cut_again_by_settle() {
    let host = Host::new();
    // 2000 lines of 25 bytes and a newline: 52000 bytes, so the page stops at the byte budget,
    // which its numbers, tags and hint count against too.
    let body: String = (1..=2000).map(|n| format!("{n:0>25}\n")).collect();
    host.fx.put("wide.txt", &body);
    let settled = settlement(&host, "read", json!({"path": "wide.txt"})).await;
    assert!(!settled.truncated() && settled.references().is_empty());
    let (text, structured) = host.settle("read", json!({"path": "wide.txt"})).await;
    // Full, less the reserve for the longest hint and note: within a few hundred bytes.
    assert!(
        text.len() <= MAX_BYTES && text.len() > MAX_BYTES - 400,
        "{}",
        text.len()
    );
    let (lines, hint) = page_lines(&text);
    assert_eq!(structured["next"], json!(lines.len() + 1));
    insta::assert_snapshot!(hint, @"(Output capped at 50 KB. Showing lines 1-1621. Use offset=1622 to continue.)");
    // A managed output's page is sized the same way.
    let reference = host.spill(&body).to_string();
    let settled = settlement(&host, "read", json!({"path": reference})).await;
    assert!(!settled.truncated() && settled.references().is_empty());
    let (text, _) = host.settle("read", json!({"path": reference})).await;
    assert!(text.len() <= MAX_BYTES && count(&text) <= 2000);
}

#[cfg(feature = "bash")]
#[tokio::test]
async fn command_output_is_bounded_with_its_status_lines() {
    let host = Host::new();
    // `seq 1 1997`, two blank lines and the status line: 2000 lines, whole.
    let settled = settlement(&host, "bash", json!({"command": "seq 1 1997"})).await;
    assert!(!settled.truncated() && settled.references().is_empty());
    let (text, _) = host.settle("bash", json!({"command": "seq 1 1997"})).await;
    let expected: String = (1..=1997).map(|n| format!("{n}\n")).collect();
    assert_eq!(text, format!("{expected}\n\nCommand exited with code 0."));
    // One more line, or `seq 1 2000`: the whole text would be over, so it is saved and
    // previewed within the bound, the status line kept at the end.
    for last in [1998, 2000] {
        let command = format!("seq 1 {last}");
        let settled = settlement(&host, "bash", json!({"command": command})).await;
        assert!(settled.truncated(), "seq 1 {last} was not cut");
        assert_eq!(settled.references().len(), 1);
        let output = settled.output().unwrap();
        let preview = output.content[0].as_text().unwrap();
        assert!(count(preview) <= 2000, "{}", count(preview));
        assert!(preview.len() <= MAX_BYTES);
        assert!(preview.contains("tool-output://"), "{preview}");
        assert!(preview.ends_with("Command exited with code 0."));
    }
}

#[cfg(feature = "bash")]
#[tokio::test]
async fn command_output_over_the_limit_is_previewed_and_kept_whole() {
    let host = Host::new();
    let settled = settlement(&host, "bash", json!({"command": "seq 1 2001"})).await;
    assert!(settled.truncated());
    let output = settled.output().unwrap();
    let preview = output.content[0].as_text().unwrap();
    assert!(
        preview.lines().count() <= 2000,
        "{}",
        preview.lines().count()
    );
    assert!(preview.starts_with("1\n2\n") && preview.ends_with("Command exited with code 0."));
    let reference = settled.references()[0].clone();
    let mut kept = String::new();
    std::io::Read::read_to_string(
        &mut host.fx.services.store.open(&reference).unwrap(),
        &mut kept,
    )
    .unwrap();
    let expected: String = (1..=2001).map(|n| format!("{n}\n")).collect();
    assert_eq!(kept, format!("{expected}\n\nCommand exited with code 0."));
}

#[tokio::test]
async fn another_session_reads_a_managed_output_as_missing() {
    let host = Host::new();
    let body: String = (1..=3000).map(|i| format!("row {i}\n")).collect();
    let reference = host.spill(&body).to_string();
    let (text, _) = host
        .settle("read", json!({"path": reference, "limit": 1}))
        .await;
    assert!(text.contains("row 1"), "{text}");

    let mut other = context();
    other.session_id = "ses_other".to_owned();
    let call = Call::new("c2", "read", json!({"path": reference}));
    let foreign = host.snapshot.settle(&call, &other).await.unwrap();
    assert!(foreign.is_error());
    // Removed, the owner reads it the same way: a reference cannot be probed.
    host.fx.services.store.remove_session("ses_test").unwrap();
    let missing = settlement(&host, "read", json!({"path": reference})).await;
    assert_eq!(foreign.result(), missing.result());
    let tackle_tool_core::ResultValue::Error(message) = foreign.result() else {
        panic!("not an error")
    };
    insta::assert_snapshot!(message.replace(&reference, "tool-output://<id>"), @"Unable to read tool-output://<id>: managed output tool-output://<id> does not exist (it may have expired or been removed)");
}

#[cfg(feature = "search")]
#[tokio::test]
async fn a_paged_grep_result_is_within_the_bound() {
    let host = Host::new();
    let body: String = (1..=3000)
        .map(|n| format!("match {n} {}\n", "z".repeat(20)))
        .collect();
    host.fx.put("hits.txt", &body);
    let input = json!({"pattern": "match", "limit": 3000});
    let settled = settlement(&host, "grep", input.clone()).await;
    assert!(settled.truncated());
    let reference = settled.references()[0].to_string();
    let (preview, _) = host.settle("grep", input).await;
    assert!(count(&preview) <= 2000 && preview.len() <= MAX_BYTES);
    // Each page of the saved result, tags, numbers and hint included, is within both limits.
    let (mut offset, mut pages) = (1u64, 0);
    loop {
        let settled = settlement(&host, "read", json!({"path": reference, "offset": offset})).await;
        assert!(!settled.truncated() && settled.references().is_empty());
        let (text, structured) = host
            .settle("read", json!({"path": reference, "offset": offset}))
            .await;
        assert!(count(&text) <= 2000, "{} lines", count(&text));
        assert!(text.len() <= MAX_BYTES, "{} bytes", text.len());
        pages += 1;
        match structured["next"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert!(pages >= 2, "{pages}");
}
