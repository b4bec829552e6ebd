//! A tool's own frame around its content (a status line after a command's output, tags and
//! line numbers around a page) counts against the limits like the content: the limits hold
//! for the whole text the model reads.

use tackle_tool_core::ToolOutput;

use crate::common::*;

/// `content` followed by a status line, as `bash` frames a command's output.
fn framed(content: &str) -> ToolOutput {
    text_output(format!("{content}\n\nCommand exited with code 0."))
}

fn numbers(last: usize) -> String {
    (1..=last).map(|n| format!("{n}\n")).collect()
}

#[test]
fn a_framed_text_within_the_limits_passes_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    // 1997 lines of output, two blank lines and the status line: 2000 lines.
    let output = framed(&numbers(1997));
    assert_eq!(lines(model_text(&output)), 2000);
    assert!(!store.needs_spill(&output).unwrap());
    let bounded = store.bound("ses", "call", output.clone()).unwrap();
    assert_eq!(bounded.output.content, output.content);
    assert!(!bounded.truncated && managed_files(&store).is_empty());
}

#[test]
fn the_frame_counts_so_the_whole_text_stays_within_the_limits() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    // `seq 1 2000`: the output alone fits, with its status line it does not.
    let output = framed(&numbers(2000));
    assert!(store.needs_spill(&output).unwrap());
    let bounded = store.bound("ses", "call", output).unwrap();
    assert!(bounded.truncated);
    let preview = model_text(&bounded.output);
    assert!(lines(preview) <= 2000 && preview.len() <= 51_200);
    assert!(preview.ends_with("Command exited with code 0."));
    // Bytes likewise: 50 KiB of output and its status line.
    let output = framed(&"x".repeat(51_200 - 10));
    assert!(store.needs_spill(&output).unwrap());
    let bounded = store.bound("ses", "call", output).unwrap();
    assert!(model_text(&bounded.output).len() <= 51_200);
}
