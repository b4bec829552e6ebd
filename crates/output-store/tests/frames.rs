//! A tool's declared frame is not counted against the limits, up to a ceiling.

use tackle_output_store::MAX_FRAME_LINES;
use tackle_tool_core::{Frame, ToolOutput};

use crate::common::*;

/// `content` followed by a status line, declared as frame.
fn framed(content: &str) -> ToolOutput {
    let text = format!("{content}\n\nCommand exited with code 0.");
    let mut output = text_output(text.clone());
    output.frame = Frame::around(&text, content);
    output
}

fn numbers(last: usize) -> String {
    (1..=last).map(|n| format!("{n}\n")).collect()
}

#[test]
fn content_within_the_limits_passes_with_its_frame() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    for last in [1999, 2000] {
        let output = framed(&numbers(last));
        assert_eq!(
            output.frame,
            Frame {
                lines: 3,
                bytes: 29
            }
        );
        assert!(!store.needs_spill(&output).unwrap(), "{last}");
        let bounded = store.bound("ses", "call", output.clone()).unwrap();
        assert_eq!(bounded.output.content, output.content);
        assert!(!bounded.truncated && managed_files(&store).is_empty());
    }
    // Without its frame declared, the same text is over the line limit.
    let mut bare = framed(&numbers(2000));
    bare.frame = Frame::NONE;
    assert!(store.needs_spill(&bare).unwrap());
}

#[test]
fn content_over_the_limits_is_bounded_as_before_frame_included() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let bounded = store.bound("ses", "call", framed(&numbers(2001))).unwrap();
    assert!(bounded.truncated);
    let preview = model_text(&bounded.output);
    assert!(lines(preview) <= 2000 && preview.len() <= 51_200);
    assert!(preview.ends_with("Command exited with code 0."));
}

#[test]
fn a_frame_beyond_the_ceiling_counts_as_content() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let text = numbers(2000 + MAX_FRAME_LINES + 1);
    let mut output = text_output(text.clone());
    output.frame = Frame {
        lines: MAX_FRAME_LINES + 1,
        bytes: 0,
    };
    assert!(store.needs_spill(&output).unwrap());
    output.frame.lines = MAX_FRAME_LINES;
    assert!(store.needs_spill(&output).unwrap());
    let mut output = text_output("x".repeat(51_200 + 25_601));
    output.frame = Frame {
        lines: 0,
        bytes: 1 << 20,
    };
    assert!(store.needs_spill(&output).unwrap());
    output.content = text_output("x".repeat(51_200 + 25_600)).content;
    assert!(!store.needs_spill(&output).unwrap());
}
