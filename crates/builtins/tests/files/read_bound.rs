//! A page of `read`, as the model reads it (its tags, line numbers, hint and notes included),
//! stays within the call's budget of lines and bytes, whatever the file's lines are.

use proptest::prelude::*;
use serde_json::json;
use tackle_tool_core::{Budget, Call, count_lines};

use super::support::{Fixture, context, text_of};

/// Lines of the lengths given, each of `fill`, cut into the file in order.
fn file(lengths: &[usize], fill: char) -> String {
    lengths
        .iter()
        .map(|&n| format!("{}\n", fill.to_string().repeat(n)))
        .collect()
}

fn read_page(fx: &Fixture, offset: u64, budget: Budget) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut ctx = context();
    ctx.budget = budget;
    let call = Call::new("call_1", "read", json!({"path": "f.txt", "offset": offset}));
    let output = runtime
        .block_on(fx.tool("read").run_unbounded(&call, &ctx))
        .unwrap();
    text_of(&output)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn a_page_with_its_frame_fits_the_budget(
        lengths in prop::collection::vec(
            prop_oneof![6 => 0usize..40, 2 => 40usize..400, 1 => 400usize..3000],
            1..4000,
        ),
        fill in prop::sample::select(vec!['a', 'é', '日', '😀']),
        at in any::<prop::sample::Index>(),
        lines in 16usize..=2000,
        bytes in 16_384usize..=51_200,
    ) {
        let fx = Fixture::new();
        fx.put("f.txt", file(&lengths, fill));
        let offset = at.index(lengths.len()) as u64 + 1;
        let budget = Budget::new(lines, bytes);
        let text = read_page(&fx, offset, budget);
        let shown = count_lines(text.as_bytes());
        prop_assert!(shown <= lines as u64, "{} lines of {}", shown, lines);
        prop_assert!(text.len() <= bytes, "{} bytes of {}", text.len(), bytes);
        let first = format!("\n{offset}: ");
        prop_assert!(text.contains(&first), "the page does not start at {}", offset);
    }
}

#[test]
fn a_3000_line_file_reads_within_2000_lines_and_50_kib() {
    let fx = Fixture::new();
    let lengths = vec![60; 3000];
    fx.put("f.txt", file(&lengths, 'q'));
    let text = read_page(&fx, 1, Budget::DEFAULT);
    assert!(count_lines(text.as_bytes()) <= 2000);
    assert!(text.len() <= 50 * 1024, "{}", text.len());
    // Before, this page held 2000 lines or 50 KB of content plus numbers and tags (57.7 KB).
    let short = vec![8; 3000];
    fx.put("f.txt", file(&short, 'q'));
    let text = read_page(&fx, 1, Budget::DEFAULT);
    assert!(
        count_lines(text.as_bytes()) <= 2000,
        "{}",
        count_lines(text.as_bytes())
    );
}

#[test]
fn a_directory_page_fits_the_budget_with_its_frame() {
    let fx = Fixture::new();
    // 2500 entries with long names: 2000 of them would be about 400 KB, 2000 lines plus tags.
    for n in 0..2500 {
        fx.put(&format!("big/{n:0>4}-{}", "n".repeat(180)), "");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let call = Call::new("call_1", "read", json!({"path": "big"}));
    let output = runtime
        .block_on(fx.tool("read").run_unbounded(&call, &context()))
        .unwrap();
    let text = text_of(&output);
    assert!(text.len() <= 50 * 1024, "{}", text.len());
    assert!(count_lines(text.as_bytes()) <= 2000);
    let shown = output.structured["entries"].as_array().unwrap().len();
    assert_eq!(output.structured["next"], json!(shown + 1));
    assert!(
        text.contains(&format!("Use offset={} to continue.", shown + 1)),
        "{text}"
    );
    // Short names: the line budget, less the frame's lines.
    for n in 0..2500 {
        fx.put(&format!("many/{n:0>4}"), "");
    }
    let call = Call::new("call_1", "read", json!({"path": "many"}));
    let output = runtime
        .block_on(fx.tool("read").run_unbounded(&call, &context()))
        .unwrap();
    let text = text_of(&output);
    assert!(
        count_lines(text.as_bytes()) <= 2000,
        "{}",
        count_lines(text.as_bytes())
    );
    assert_eq!(output.structured["entries"].as_array().unwrap().len(), 1994);
}

#[cfg(feature = "media")]
#[test]
fn a_notebook_page_fits_the_byte_budget_with_its_tags_and_hints() {
    let fx = Fixture::new();
    // 300 cells of one 400-byte line: 120 KB, so the page stops at the byte budget.
    let cells: Vec<serde_json::Value> = (0..300)
        .map(|n| json!({"cell_type": "markdown", "source": [format!("{n:0>400}")]}))
        .collect();
    fx.put(
        "wide.ipynb",
        serde_json::to_vec(&json!({"cells": cells})).unwrap(),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let call = Call::new("call_1", "read", json!({"path": "wide.ipynb"}));
    let output = runtime
        .block_on(fx.tool("read").run_unbounded(&call, &context()))
        .unwrap();
    let text = text_of(&output);
    assert!(text.len() <= 50 * 1024, "{}", text.len());
    assert!(output.structured["next"].is_u64(), "{}", output.structured);
}
