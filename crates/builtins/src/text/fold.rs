//! The one table of typographic look-alikes, shared by edit's last rung and apply_patch's last
//! seek level, so the same model input matches (or misses) in both tools.
//!
//! Models and editors swap ASCII punctuation for typographic characters (and back): smart
//! quotes, dashes, the minus sign, primes, and the no-break space family. Folding maps each to
//! the ASCII character it stands for, one char for one char, so byte offsets found in a folded
//! comparison are still char boundaries of the original text.
//!
//! The table is the union of what edit and apply_patch folded before they shared it: codex's
//! apply_patch set (dashes, curly quotes, spaces U+2002–U+200A) plus the primes (′ ″) and the
//! quads (U+2000, U+2001) edit folded. The ellipsis (… for `...`) is not folded: it is one char
//! for three and would break the one-for-one offsets both tools rely on.

/// The ASCII character `c` stands for, or `c` itself.
pub(crate) fn fold(c: char) -> char {
    match c {
        // ‘ ’ ‚ ‛ and the prime ′.
        '\u{2018}'..='\u{201B}' | '\u{2032}' => '\'',
        // “ ” „ ‟ and the double prime ″.
        '\u{201C}'..='\u{201F}' | '\u{2033}' => '"',
        // Hyphen, non-breaking hyphen, figure dash, en and em dash, horizontal bar, minus sign.
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        // No-break space, the quads and sized spaces, narrow no-break, math and ideographic.
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        _ => c,
    }
}

/// `a` equals `b` once both are folded.
pub(crate) fn folded_eq(a: &str, b: &str) -> bool {
    a.chars().map(fold).eq(b.chars().map(fold))
}

/// Every character the table folds, with what it folds to (for tests of both tools).
#[cfg(test)]
pub(crate) fn table() -> Vec<(char, char)> {
    (0..=0x3000_u32)
        .filter_map(char::from_u32)
        .filter(|&c| fold(c) != c)
        .map(|c| (c, fold(c)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_to_ascii_one_for_one() {
        assert!(folded_eq("it’s — “ok” ′x″", "it's - \"ok\" 'x\""));
        assert!(folded_eq("a\u{00A0}b\u{2000}c\u{3000}d", "a b c d"));
        assert!(!folded_eq("…", "..."));
        for (from, to) in table() {
            assert!(to.is_ascii(), "{from:?}");
        }
        assert!(table().iter().any(|&(c, _)| c == '\u{3000}'));
    }
}
