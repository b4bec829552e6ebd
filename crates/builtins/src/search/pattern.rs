//! Compiling the model's patterns: globs (glob's `pattern`, grep's `include`) and regexes.
//!
//! Globs follow ripgrep's `--glob` semantics, which models tuned on opencode/Kilo expect: a
//! pattern without `/` matches a file name at any depth (`*.rs` finds `src/a/b.rs`), a pattern
//! with `/` is anchored at the search root (`src/*.rs`), `*` never crosses `/`, `**` does, and
//! a trailing `/` means everything below that directory. Matching happens against paths
//! relative to the search root, so a pattern can never reach outside it.

use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};
use grep_regex::{ErrorKind, RegexMatcher, RegexMatcherBuilder};
use tackle_tool_core::ToolFailure;

use crate::limits::{MAX_REGEX_BYTES, MAX_REGEX_CACHE_BYTES, MAX_REGEX_NESTING};

/// A compiled glob, matched against paths relative to the search root.
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    matcher: GlobMatcher,
}

impl Glob {
    /// Compiles `pattern` for a search under `root` (the absolute search root, used only to
    /// accept absolute patterns that point inside it).
    pub(crate) fn new(pattern: &str, root: &Path) -> Result<Self, ToolFailure> {
        let (mut normalized, below) = normalize(pattern, root)?;
        if below {
            normalized.push_str("/**");
        }
        Ok(Self {
            matcher: compile(pattern, &normalized)?,
        })
    }

    /// True when `relative` (a path relative to the search root) matches.
    pub(crate) fn is_match(&self, relative: &Path) -> bool {
        self.matcher.is_match(relative)
    }
}

/// What glob lists for a pattern: files, or directories when the pattern ends in `/`; hidden
/// names (a leading `.`) only where the pattern names them with a leading dot, so `*.yml`
/// leaves out `.github/ci.yml` as `rg --files` does, while `.github/**` or `**/.env` list them.
#[derive(Debug, Clone)]
pub(crate) struct Listing {
    glob: GlobMatcher,
    /// The pattern ended in `/`: it lists directories.
    pub(crate) directories: bool,
    /// The pattern's segments that start with a dot, each matched against one name.
    dotted: Vec<GlobMatcher>,
}

impl Listing {
    pub(crate) fn new(pattern: &str, root: &Path) -> Result<Self, ToolFailure> {
        let (normalized, directories) = normalize(pattern, root)?;
        let dotted = normalized
            .split('/')
            .filter(|segment| segment.starts_with('.'))
            .map(|segment| compile(pattern, segment))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            glob: compile(pattern, &normalized)?,
            directories,
            dotted,
        })
    }

    /// The walk may skip hidden names altogether: the pattern names none.
    pub(crate) fn names_hidden(&self) -> bool {
        !self.dotted.is_empty()
    }

    /// True when `relative` (below the search root) matches and each of its hidden names is
    /// one the pattern names.
    pub(crate) fn is_match(&self, relative: &Path) -> bool {
        self.glob.is_match(relative)
            && relative.iter().all(|name| {
                !name.as_encoded_bytes().starts_with(b".")
                    || self.dotted.iter().any(|dotted| dotted.is_match(name))
            })
    }
}

fn compile(pattern: &str, normalized: &str) -> Result<GlobMatcher, ToolFailure> {
    let glob = GlobBuilder::new(normalized)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|err| {
            ToolFailure::new(format!("Invalid glob pattern {pattern:?}: {}", err.kind()))
        })?;
    Ok(glob.compile_matcher())
}

/// Rewrites a model's glob into the anchored form that `globset` matches, and says whether it
/// ended in `/` (a directory: grep's `include` takes everything below it, glob lists
/// directories).
fn normalize(pattern: &str, root: &Path) -> Result<(String, bool), ToolFailure> {
    let trimmed = pattern.trim();
    if trimmed.is_empty() {
        return Err(ToolFailure::new("The glob pattern is empty"));
    }
    let mut rest = trimmed;
    if rest.starts_with('/') {
        // An absolute pattern is only meaningful inside the search root.
        let root = root.to_string_lossy();
        let root = root.trim_end_matches('/');
        match rest.strip_prefix(root).and_then(|r| r.strip_prefix('/')) {
            Some(inner) => rest = inner,
            None if rest == root => rest = "**",
            None => {
                return Err(ToolFailure::new(format!(
                    "The glob pattern {trimmed:?} is an absolute path outside the search path \
                     {root}. Pass the directory to search as `path` and a pattern relative to it."
                )));
            }
        }
    }
    while let Some(inner) = rest.strip_prefix("./") {
        rest = inner;
    }
    if rest.split('/').any(|part| part == "..") {
        return Err(ToolFailure::new(format!(
            "The glob pattern {trimmed:?} contains `..`; patterns match paths below the search \
             path. Pass the directory to search as `path` instead."
        )));
    }
    let mut out = String::with_capacity(rest.len() + 4);
    let directory = rest.ends_with('/');
    let body = rest.trim_end_matches('/');
    if body.is_empty() {
        return Ok(("**".to_owned(), false));
    }
    if !body.contains('/') && body != "**" {
        out.push_str("**/");
    }
    out.push_str(body);
    Ok((out, directory))
}

/// How grep reads its pattern.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RegexOptions {
    /// Letters match either case (`rg -i`).
    pub(crate) ignore_case: bool,
    /// The pattern is a plain string, not a regex (`rg -F`).
    pub(crate) literal: bool,
    /// A match may span lines and `.` matches a newline (`rg -U --multiline-dotall`).
    pub(crate) multiline: bool,
}

/// Compiles a grep pattern (Rust `regex` syntax, one line at a time, case-sensitive, like
/// `rg`). An invalid pattern is a failure that says it is the pattern's fault.
pub(crate) fn regex(pattern: &str, options: RegexOptions) -> Result<RegexMatcher, ToolFailure> {
    if pattern.is_empty() {
        return Err(ToolFailure::new(
            "Invalid regex pattern: the pattern is empty",
        ));
    }
    let mut builder = RegexMatcherBuilder::new();
    // `^` and `$` anchor at line boundaries, as in rg, also when a match may span lines.
    builder
        .multi_line(true)
        .case_insensitive(options.ignore_case)
        .fixed_strings(options.literal)
        .size_limit(MAX_REGEX_BYTES)
        .dfa_size_limit(MAX_REGEX_CACHE_BYTES)
        .nest_limit(MAX_REGEX_NESTING);
    if options.multiline {
        builder.dot_matches_new_line(true);
    } else {
        builder.line_terminator(Some(b'\n'));
    }
    builder.build(pattern).map_err(|err| {
        let detail = match err.kind() {
            // What parses but is refused is a pattern that can match a line break.
            ErrorKind::NotAllowed(_) => format!("{err}; set `multiline` to match across lines"),
            // grep-regex reports syntax errors against its own wrapped pattern (`(?:...)`);
            // the parser's own report points into the pattern the model wrote.
            _ if !options.literal => match syntax_parser().parse(pattern) {
                Err(syntax) => syntax.to_string(),
                Ok(_) => err.to_string(),
            },
            _ => err.to_string(),
        };
        ToolFailure::new(format!("Invalid regex pattern {pattern:?}: {detail}"))
    })
}

/// The parser grep's matcher uses, with the same nesting limit, to report syntax errors.
fn syntax_parser() -> regex_syntax::Parser {
    regex_syntax::ParserBuilder::new()
        .nest_limit(MAX_REGEX_NESTING)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(p: &str) -> String {
        let (mut normalized, below) = normalize(p, Path::new("/work/loc")).unwrap();
        if below {
            normalized.push_str("/**");
        }
        normalized
    }

    #[test]
    fn bare_names_match_at_any_depth() {
        assert_eq!(norm("*.rs"), "**/*.rs");
        assert_eq!(norm("Cargo.toml"), "**/Cargo.toml");
        assert_eq!(norm("**/*.rs"), "**/*.rs");
        assert_eq!(norm("src/*.rs"), "src/*.rs");
        assert_eq!(norm("./src/*.rs"), "src/*.rs");
        // A trailing `/` alone does not anchor (gitignore): any directory named `src`.
        assert_eq!(norm("src/"), "**/src/**");
        assert_eq!(norm("a/src/"), "a/src/**");
        assert_eq!(norm("/work/loc/src/*.rs"), "src/*.rs");
        assert_eq!(norm("/work/loc"), "**");
    }

    #[test]
    fn escaping_patterns_are_refused() {
        assert!(normalize("../x/*.rs", Path::new("/work/loc")).is_err());
        assert!(normalize("/etc/*.conf", Path::new("/work/loc")).is_err());
        assert!(normalize("  ", Path::new("/work/loc")).is_err());
        // A sibling whose name starts with the root's name is outside too.
        assert!(normalize("/work/location/*.rs", Path::new("/work/loc")).is_err());
    }

    #[test]
    fn glob_semantics() {
        let root = Path::new("/r");
        let g = Glob::new("*.rs", root).unwrap();
        assert!(g.is_match(Path::new("a.rs")));
        assert!(g.is_match(Path::new("src/deep/a.rs")));
        assert!(!g.is_match(Path::new("a.rsx")));
        let g = Glob::new("src/*.rs", root).unwrap();
        assert!(g.is_match(Path::new("src/a.rs")));
        assert!(!g.is_match(Path::new("src/deep/a.rs")));
        let g = Glob::new(".github/workflows/*.yml", root).unwrap();
        assert!(g.is_match(Path::new(".github/workflows/ci.yml")));
        let g = Glob::new("*.{ts,tsx}", root).unwrap();
        assert!(g.is_match(Path::new("web/app.tsx")));
    }

    #[test]
    fn listings_name_hidden_paths_with_a_leading_dot() {
        let root = Path::new("/r");
        let listed = |pattern: &str, path: &str| {
            Listing::new(pattern, root)
                .unwrap()
                .is_match(Path::new(path))
        };
        assert!(listed("*.yml", "a/b.yml"));
        assert!(!listed("*.yml", ".github/workflows/ci.yml"));
        assert!(listed(".github/**", ".github/workflows/ci.yml"));
        assert!(!listed(".github/**", ".github/workflows/.hidden.yml"));
        assert!(listed(
            ".github/workflows/*.yml",
            ".github/workflows/ci.yml"
        ));
        assert!(listed(".*", ".env"));
        assert!(listed(".*", "src/.env"));
        assert!(listed("**/.env", "a/b/.env"));
        assert!(!listed("**/*", ".env"));
        assert!(!listed("src/**", "src/.cache/x"));
        assert!(listed(".env*", ".env.local"));
        let directories = Listing::new("src/", root).unwrap();
        assert!(directories.directories);
        assert!(directories.is_match(Path::new("a/src")));
        assert!(!directories.is_match(Path::new("a/src/b")));
        assert!(!Listing::new("*.rs", root).unwrap().directories);
    }

    #[test]
    fn invalid_patterns_say_so() {
        let err = Glob::new("a{b", Path::new("/r")).unwrap_err();
        assert!(
            err.message.starts_with("Invalid glob pattern \"a{b\": "),
            "{err}"
        );
        let err = regex("foo(", RegexOptions::default()).unwrap_err();
        assert!(
            err.message.starts_with("Invalid regex pattern \"foo(\": "),
            "{err}"
        );
        assert!(err.message.contains("unclosed group"), "{err}");
    }
}
