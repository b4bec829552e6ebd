//! The matcher agrees with the reference's regex translation (P6–P8).

use proptest::prelude::*;
use tackle_permission::matches;

/// The reference: the regex translation, with `\` read as `/` in the input too.
fn reference(input: &str, pattern: &str) -> bool {
    crate::regex_reference::translate(pattern).is_match(&input.replace('\\', "/"))
}

const ALPHABET: &[char] = &['a', 'b', ' ', '/', '\\', '\n', '.', 'é', '(', '+'];

fn text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(ALPHABET), 0..max)
        .prop_map(|chars| chars.into_iter().collect())
}

fn pattern() -> impl Strategy<Value = String> {
    let mut symbols = ALPHABET.to_vec();
    symbols.extend(['*', '?', '*']);
    prop::collection::vec(prop::sample::select(symbols), 0..12)
        .prop_map(|chars| chars.into_iter().collect())
}

/// An input built from `pattern` by filling each `*` and `?`, so that matches are common.
fn filled(pattern: &str, fills: &[String]) -> String {
    let mut out = String::new();
    for (i, c) in pattern.chars().enumerate() {
        let fill = &fills[i % fills.len()];
        match c {
            '*' => out.push_str(fill),
            '?' => out.push(fill.chars().next().unwrap_or('x')),
            other => out.push(other),
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn agrees_on_random_inputs(input in text(16), pattern in pattern()) {
        prop_assert_eq!(matches(&input, &pattern), reference(&input, &pattern),
            "input {:?} pattern {:?}", input, pattern);
    }

    #[test]
    fn agrees_on_near_matches(
        pattern in pattern(),
        fills in prop::collection::vec(text(4), 1..4),
        cut in 0usize..3,
    ) {
        let mut input = filled(&pattern, &fills);
        // Sometimes drop a character from the end to probe near misses.
        for _ in 0..cut {
            input.pop();
        }
        prop_assert_eq!(matches(&input, &pattern), reference(&input, &pattern),
            "input {:?} pattern {:?}", input, pattern);
    }
}
