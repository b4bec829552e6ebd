//! read's PDF text extraction with its page limits, in-process (as an embedder without a media
//! worker runs it).
//!
//! Input: the PDF's bytes. The seeds are a normal two-page PDF and the hostile ones read's tests
//! build: a form that draws itself, two forms that draw each other, forms nested 20 deep, a
//! "billion laughs" of forms drawing forms ten times over nine levels, one stream listed 2,000
//! times in a page's contents, and a stream inflating to 4 GiB through two FlateDecode filters.
//!
//! The extractor panics on many malformed files and read catches those panics (they become the
//! page's or the file's error), so libFuzzer's abort-on-panic hook is replaced by a silent one:
//! only a panic that escapes read (caught by libFuzzer's own guard, which aborts) is a crash.
//!
//! Properties: no panic escapes, no stack overflow, no hang and no unbounded memory on any
//! input (libFuzzer's timeout and memory limit catch the last two); every page that is
//! extracted was measured first, so what the extractor may cost is bounded by the limits.
#![no_main]

use std::sync::Once;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    static QUIET: Once = Once::new();
    QUIET.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    let _ = tackle_builtins::read::extract_pdf_text(data);
});
