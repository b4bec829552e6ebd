//! HTML conversion (webfetch's `markdown` and `text` formats) and body decoding.
//!
//! Properties: no panic, no stack overflow, no timeout (libFuzzer's `-timeout`), bounded
//! memory (`-rss_limit_mb`), whatever the page. Input: the response body; inputs are allowed
//! to be long (`-max_len` is raised for this target) so deep nesting is reachable.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tackle_builtins::web::{decode, html_to_markdown, html_to_text};

fuzz_target!(|data: &[u8]| {
    let html = decode(data, "text/html", true);
    let _ = html_to_markdown(&html);
    let _ = html_to_text(&html);
    let _ = decode(data, "text/plain; charset=utf-16", false);
});
