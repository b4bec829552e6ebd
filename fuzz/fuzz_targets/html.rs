//! HTML conversion (webfetch's `markdown` and `text` formats) and body decoding.
//!
//! Properties: no panic, no stack overflow, no timeout (libFuzzer's `-timeout`), bounded
//! memory (`-rss_limit_mb`), whatever the page. The conversion's own deadline is set past
//! libFuzzer's timeout, so a slow page is reported rather than cut short.
//!
//! Input: the response body. Sections build long pages from small inputs: `=== repeat N`
//! repeats its body N times (at most 200000), any other section is taken as it is, and the
//! sections are joined in order, so `=== repeat 10000` over `<div>` nests ten thousand deep.
#![no_main]

use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use tackle_builtins::web::{decode, html_to_markdown, html_to_text};
use tackle_fuzz::sections;

const MAX_REPEAT: u64 = 200_000;

/// Longer than the target's libFuzzer timeout (`cargo xtask fuzz` sets 20 s).
const DEADLINE: Duration = Duration::from_secs(60);

fuzz_target!(|data: &[u8]| {
    let body = page(data);
    let html = decode(&body, "text/html", true);
    let deadline = Instant::now() + DEADLINE;
    let _ = html_to_markdown(&html, deadline);
    let _ = html_to_text(&html, deadline);
    let _ = decode(&body, "text/plain; charset=utf-16", false);
});

fn page(data: &[u8]) -> Vec<u8> {
    let Some(sections) = sections::split(data) else {
        return data.to_vec();
    };
    let mut page = Vec::new();
    for section in sections {
        let times = if section.name() == "repeat" {
            section.number(0, 1).min(MAX_REPEAT)
        } else {
            1
        };
        for _ in 0..times {
            page.extend_from_slice(section.body);
        }
    }
    page
}
