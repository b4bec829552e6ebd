//! The permission wildcard matcher against a plain reference, on short inputs.
//!
//! Property: `matches(input, pattern)` equals a dynamic-programming reading of the documented
//! rules (`*` any run, `?` one character, anchored, `\` read as `/` on both sides, a trailing
//! ` *` also matching without it), and a compiled `Pattern` agrees with `matches`.
//! Input: `=== pattern` and `=== input` sections (or `pattern\ninput`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tackle_fuzz::sections;
use tackle_permission::{Pattern, matches};

fuzz_target!(|data: &[u8]| {
    let Some((pattern, input)) = split(data) else {
        return;
    };
    // The reference is quadratic; the matcher's linear bound has its own tests.
    if pattern.chars().count() > 64 || input.chars().count() > 256 {
        return;
    }
    let expected = reference(&input, &pattern);
    assert_eq!(
        matches(&input, &pattern),
        expected,
        "matches({input:?}, {pattern:?})"
    );
    assert_eq!(Pattern::new(&pattern).matches(&input), expected);
});

fn split(data: &[u8]) -> Option<(String, String)> {
    let sections = sections::split(data)?;
    let text =
        |name: &str| sections::get(&sections, name).and_then(|s| std::str::from_utf8(s.body).ok());
    if let (Some(pattern), Some(input)) = (text("pattern"), text("input")) {
        return Some((pattern.to_owned(), input.to_owned()));
    }
    let text = std::str::from_utf8(data).ok()?;
    let (pattern, input) = text.split_once('\n')?;
    Some((pattern.to_owned(), input.to_owned()))
}

/// The documented semantics, directly.
fn reference(input: &str, pattern: &str) -> bool {
    let input: Vec<char> = input.replace('\\', "/").chars().collect();
    let pattern = pattern.replace('\\', "/");
    let full: Vec<char> = pattern.chars().collect();
    glob(&input, &full)
        || pattern
            .strip_suffix(" *")
            .is_some_and(|short| glob(&input, &short.chars().collect::<Vec<_>>()))
}

fn glob(input: &[char], pattern: &[char]) -> bool {
    // can[j]: the input's first i characters match the pattern's first j.
    let mut can = vec![false; pattern.len() + 1];
    can[0] = true;
    for j in 1..=pattern.len() {
        can[j] = can[j - 1] && pattern[j - 1] == '*';
    }
    for &c in input {
        let mut next = vec![false; pattern.len() + 1];
        for j in 1..=pattern.len() {
            next[j] = match pattern[j - 1] {
                '*' => next[j - 1] || can[j],
                '?' => can[j - 1],
                p => can[j - 1] && p == c,
            };
        }
        can = next;
    }
    can[pattern.len()]
}
