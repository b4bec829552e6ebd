//! bash's terminal model: the text a command's output becomes (`bash::terminal_text`, what
//! `bash` and `job_output` show) is never more than a small constant factor of the output,
//! whatever escape sequences, cursor moves, erases, backspaces, tabs and invalid UTF-8 it
//! holds (`bash::terminal_text_bound`: four bytes of text per byte, plus one line's width).
//! The whole input is the stream; a hang (work more than linear in the input) shows as a
//! timeout.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tackle_builtins::bash::{terminal_text, terminal_text_bound};

fuzz_target!(|data: &[u8]| {
    let text = terminal_text(data.to_vec());
    let bound = terminal_text_bound(data.len());
    assert!(
        text.len() <= bound,
        "{} bytes of output became {} bytes of text (bound {bound})",
        data.len(),
        text.len()
    );
    // Plain text without controls comes through unchanged.
    if let Ok(plain) = std::str::from_utf8(data)
        && !plain
            .bytes()
            .any(|b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f)
    {
        assert_eq!(text, plain);
    }
});
