//! Reference codes: every rule of the reference behaviour that a comment or a doc cites by code
//! is defined in `docs/reference.md`, so a reader of the repository can look it up.
//!
//! - A code is one to three capital letters and a number (`BA3`, `LM7`); a range (`RG1–RG5`,
//!   with an en dash or a hyphen) cites every code from one end to the other.
//! - A code is checked when the word "reference" comes right before it (`(reference A7)`), or
//!   when its letters are those of a code family that `docs/reference.md` defines (so a bare
//!   `BA12` is checked as well as `reference Z9`).
//! - Only Rust comments (`//`, `///`, `//!`) and Markdown are read, and code spans in backticks
//!   are left out, so identifiers and string literals never count as citations.
//! - `docs/reference.md` defines a code with a heading whose first word is the code (`### BA3`).
//!
//! Forbidden outright, in the same text and in `docs/reference.md` too: the section sign (a
//! citation of a section of some document) and mentions of documents outside the repository.

use std::collections::BTreeSet;
use std::path::Path;

/// Where the codes are defined, relative to the workspace root.
const DEFINITIONS: &str = "docs/reference.md";

/// Every citation of an undefined code, section sign and outside document under `root`.
pub(crate) fn check(root: &Path) -> Vec<String> {
    let definitions = root.join(DEFINITIONS);
    let defined = defined_codes(&std::fs::read_to_string(&definitions).unwrap_or_default());
    let families: BTreeSet<&str> = defined.iter().map(|code| prefix(code)).collect();
    let mut files = vec![root.join("README.md")];
    for dir in ["crates", "xtask", "docs"] {
        super::files_with(&root.join(dir), &["rs", "md"], &mut files);
    }
    let mut problems = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        let is_rust = file.extension().is_some_and(|ext| ext == "rs");
        let cites_codes = file != definitions;
        for (number, line) in text.lines().enumerate() {
            let Some(prose) = (if is_rust { comment(line) } else { Some(line) }) else {
                continue;
            };
            let at = format!("references: {shown}:{}", number + 1);
            problems.extend(forbidden(prose).into_iter().map(|p| format!("{at}: {p}")));
            if cites_codes {
                for code in cited_codes(&without_code_spans(prose), &families) {
                    if !defined.contains(&code) {
                        problems.push(format!(
                            "{at}: `{code}` is not defined in {DEFINITIONS} (define it there, or \
                             say the reason in words)"
                        ));
                    }
                }
            }
        }
    }
    problems
}

/// The codes `reference` defines: headings whose first word is a code.
fn defined_codes(reference: &str) -> BTreeSet<String> {
    reference
        .lines()
        .filter_map(|line| line.strip_prefix('#'))
        .filter_map(|heading| heading.trim_start_matches('#').split_whitespace().next())
        .filter(|word| split_code(word).is_some())
        .map(str::to_owned)
        .collect()
}

/// The comment on a line of Rust: the whole line when it is a comment line, else what follows
/// ` // `. Code is never a citation.
fn comment(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    if trimmed.starts_with("//") {
        return Some(trimmed);
    }
    line.find(" // ").map(|at| &line[at..])
}

/// The section sign and names of documents that live outside the repository.
fn forbidden(prose: &str) -> Vec<String> {
    // Built from pieces so that this file does not trip its own check.
    let section = '\u{a7}';
    let outside = [
        format!("{}.md", "design"),
        format!("project's {} notes", "design"),
        format!("{}-tools", "kilo"),
        format!("{}-demands", "user"),
        format!("{}-anchors", "rust"),
        format!("/work/{}", "shared"),
    ];
    let mut problems = Vec::new();
    if prose.contains(section) {
        problems.push(format!(
            "`{section}` cites a section of a document; say the reason in words or cite a code \
             defined in {DEFINITIONS}"
        ));
    }
    let lower = prose.to_lowercase();
    for name in outside.iter().filter(|name| lower.contains(name.as_str())) {
        problems.push(format!(
            "`{name}` is outside the repository; say the reason in words or cite a code defined \
             in {DEFINITIONS}"
        ));
    }
    problems
}

/// `prose` without the spans between backticks.
fn without_code_spans(prose: &str) -> String {
    prose.split('`').step_by(2).collect::<Vec<_>>().join(" ")
}

/// The codes `prose` cites: each code, and every code of each range, that follows the word
/// "reference" or belongs to one of `families`.
fn cited_codes(prose: &str, families: &BTreeSet<&str>) -> Vec<String> {
    let words = words(prose);
    let mut codes = Vec::new();
    let mut index = 0;
    while index < words.len() {
        let (start, word) = words[index];
        index += 1;
        let Some((letters, first)) = split_code(word) else {
            continue;
        };
        let after_reference = index >= 2 && {
            let (before_start, before) = words[index - 2];
            before.eq_ignore_ascii_case("reference")
                && prose[before_start + before.len()..start]
                    .chars()
                    .all(|c| c.is_whitespace() || c == '(')
        };
        // `first–last`: a dash between two codes of the same letters.
        let mut numbers = vec![first];
        if let Some(&(next_start, next)) = words.get(index)
            && matches!(&prose[start + word.len()..next_start], "–" | "-")
            && let Some((next_letters, last)) = split_code(next)
            && next_letters == letters
        {
            index += 1;
            numbers = if first <= last {
                (first..=last).collect()
            } else {
                vec![first, last]
            };
        }
        if after_reference || families.contains(letters) {
            codes.extend(numbers.into_iter().map(|n| format!("{letters}{n}")));
        }
    }
    codes
}

/// The words of `text` (runs of ASCII letters, digits and `_`) with their byte offsets.
fn words(text: &str) -> Vec<(usize, &str)> {
    let mut words = Vec::new();
    let mut start = None;
    for (at, c) in text.char_indices().chain([(text.len(), ' ')]) {
        let in_word = c.is_ascii_alphanumeric() || c == '_';
        match (start, in_word) {
            (None, true) => start = Some(at),
            (Some(from), false) => {
                words.push((from, &text[from..at]));
                start = None;
            }
            _ => {}
        }
    }
    words
}

/// `word` as a code: one to three capital letters and a number without leading zeros.
fn split_code(word: &str) -> Option<(&str, u32)> {
    let (letters, number) = word.split_at(word.find(|c: char| c.is_ascii_digit())?);
    let is_code = (1..=3).contains(&letters.len())
        && letters.bytes().all(|b| b.is_ascii_uppercase())
        && (1..=3).contains(&number.len())
        && number.bytes().all(|b| b.is_ascii_digit())
        && !number.starts_with('0');
    is_code.then_some((letters, number.parse().ok()?))
}

/// The letters of a code.
fn prefix(code: &str) -> &str {
    split_code(code).map_or(code, |(letters, _)| letters)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree with `docs/reference.md` defining `defined` and one Rust file holding `source`.
    fn tree(defined: &[&str], source: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("docs")).unwrap();
        std::fs::create_dir_all(dir.path().join("crates/x/src")).unwrap();
        let headings: String = defined
            .iter()
            .map(|code| format!("### {code}\n\nWhat it names.\n\n"))
            .collect();
        std::fs::write(dir.path().join(DEFINITIONS), headings).unwrap();
        std::fs::write(dir.path().join("crates/x/src/lib.rs"), source).unwrap();
        dir
    }

    // Comment markers and codes are built from pieces: this file is checked like any other.
    fn doc(text: &str) -> String {
        format!("{}! {text}\nfn f() {{}}\n", "//")
    }

    #[test]
    fn an_undefined_code_fails() {
        let source = doc(&format!("Follows (reference {}3) and {}4.", "BA", "BA"));
        let dir = tree(&["BA3"], &source);
        let problems = check(dir.path());
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("references: crates/x/src/lib.rs:1: `BA4` is not defined"),
            "{problems:?}"
        );
    }

    #[test]
    fn defined_codes_pass() {
        let source = doc(&format!(
            "Follows (reference {a}3), {a}4 and {a}3–{a}4.",
            a = "BA"
        ));
        let dir = tree(&["BA3", "BA4"], &source);
        assert_eq!(check(dir.path()), Vec::<String>::new());
    }

    #[test]
    fn a_range_cites_every_code_in_it() {
        let source = doc(&format!("Per-name stacks ({r}1–{r}3).", r = "RG"));
        let dir = tree(&["RG1", "RG3"], &source);
        let problems = check(dir.path());
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("`RG2`"), "{problems:?}");
    }

    #[test]
    fn only_known_families_or_the_word_reference_make_a_citation() {
        let cited = doc(&format!("See reference {}9.", "Z"));
        let problems = check(tree(&["BA3"], &cited).path());
        assert_eq!(problems.len(), 1, "{problems:?}");
        // A bare word of an unknown family, code and code spans are not citations.
        let plain = format!(
            "{c}! Bytes {z}3 and {z}9; `{b}7` in a span.\nconst {b}8: &str = \"{b}9\";\n",
            c = "//",
            z = "Z",
            b = "BA"
        );
        assert_eq!(check(tree(&["BA3"], &plain).path()), Vec::<String>::new());
    }

    #[test]
    fn section_signs_and_outside_documents_are_forbidden() {
        let dir = tree(&["BA3"], &doc(&format!("See {}10.1.", '\u{a7}')));
        let readme = format!("# x\n\nThe reasons are in {}.md.\n", "design");
        std::fs::write(dir.path().join("README.md"), readme).unwrap();
        let problems = check(dir.path());
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].starts_with("references: README.md:3:"),
            "{problems:?}"
        );
        assert!(problems[1].starts_with("references: crates/x/src/lib.rs:1:"));
    }

    #[test]
    fn the_definitions_may_name_codes_but_not_sections() {
        let dir = tree(&["BA3"], "fn f() {}\n");
        let reference = format!(
            "### {b}3\n\nUnlike {b}12, see {s}4.\n",
            b = "BA",
            s = '\u{a7}'
        );
        std::fs::write(dir.path().join(DEFINITIONS), reference).unwrap();
        let problems = check(dir.path());
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains(DEFINITIONS), "{problems:?}");
    }
}
