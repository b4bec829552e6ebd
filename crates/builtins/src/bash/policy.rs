//! From the analysis of a command line to what permission is asked: the `external_directory`
//! anchors of the paths it touches outside the Location, one `bash` resource per simple
//! command with its "always" pattern, what forces an ask, and the advisory warnings.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::parse::{Analysis, PathKind, PathUse, Unresolved};
use super::words::Word;
use crate::location::{self, EntryKind, Location};

/// The advisory sentence of reference BA3, after `<dir>/*`.
const WARNING_TAIL: &str = "Bash runs with host-user filesystem, process, and network \
authority; this scan is advisory only.";

/// What the call must be permitted before the command runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    /// `<dir>/*` for every directory outside the Location that a path lies in, in order.
    pub(crate) external: Vec<String>,
    /// One resource per simple command (its words, quotes resolved), in order, distinct.
    pub(crate) resources: Vec<String>,
    /// The pattern an "always" saves for each resolved command (`git checkout *`).
    pub(crate) save: Vec<String>,
    /// What cannot be resolved statically: the call is asked about even if rules allow it
    /// (their texts are resources too, so a configured deny still blocks).
    pub(crate) unresolved: Vec<Unresolved>,
    /// Advisory warnings about absolute paths outside the working directory (BA3).
    pub(crate) warnings: Vec<String>,
    /// Program-like words of the line that no resolved command starts with (`rm` in
    /// `mywrapper rm x`): if a rule names one, the call asks (see [`names_a_rule`]).
    pub(crate) stray: Vec<String>,
}

/// Where the command runs and what `~` means there.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place<'a> {
    pub(crate) location: &'a Location,
    /// The canonical working directory.
    pub(crate) cwd: &'a Path,
    /// The command's `HOME`.
    pub(crate) home: Option<&'a Path>,
}

/// Plans the permission of `command` from its `analysis`.
pub(crate) fn plan(command: &str, analysis: &Analysis, place: Place<'_>) -> Plan {
    let mut plan = Plan {
        unresolved: analysis.unresolved.clone(),
        ..Plan::default()
    };
    let mut external = BTreeSet::new();
    for path in &analysis.paths {
        for anchor in anchors(path, place, &mut plan.unresolved) {
            if external.insert(anchor.clone()) {
                plan.external.push(anchor);
            }
        }
    }
    for words in &analysis.commands {
        // `/bin/rm x` is also `rm x`: rules name programs, not their paths.
        let named = words.first().and_then(|head| {
            let (_, base) = head.text.rsplit_once('/')?;
            let mut named = words.clone();
            named[0] = Word::plain(base);
            Some(named)
        });
        for words in std::iter::once(words).chain(named.as_ref()) {
            let resource = resource(words);
            if resource.is_empty() || plan.resources.contains(&resource) {
                continue;
            }
            plan.resources.push(resource);
            if let Some(pattern) = save_pattern(words)
                && !plan.save.contains(&pattern)
            {
                plan.save.push(pattern);
            }
        }
    }
    for unresolved in &plan.unresolved {
        if !unresolved.text.is_empty() && !plan.resources.contains(&unresolved.text) {
            plan.resources.push(unresolved.text.clone());
        }
    }
    if plan.resources.is_empty() {
        // Nothing but `cd`, assignments or redirects: the line itself is the resource.
        plan.resources.push(command.trim().to_owned());
    }
    plan.warnings = warnings(command, place.cwd, &external);
    plan.stray = stray(command, analysis);
    plan
}

/// The words of `command` (split at quotes and shell punctuation, path prefixes removed)
/// that are not the program of a resolved command: where an unknown wrapper or a syntax we
/// misread may hide a program, defence in depth looks for names the rules care about.
pub(crate) fn stray(command: &str, analysis: &Analysis) -> Vec<String> {
    let heads: BTreeSet<&str> = analysis
        .commands
        .iter()
        .filter_map(|words| words.first())
        .map(|head| head.text.rsplit('/').next().unwrap_or_default())
        .collect();
    let mut out = Vec::new();
    let pieces = command.split(|c: char| {
        !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '/' | '[' | ':'))
    });
    for piece in pieces {
        let name = piece.rsplit('/').next().unwrap_or_default();
        if name.is_empty() || heads.contains(name) || out.iter().any(|n| n == name) {
            continue;
        }
        out.push(name.to_owned());
    }
    out
}

/// True when a `bash` rule decides about `name` itself other than by allowing it: a denied
/// or explicitly asked program appears somewhere we did not resolve as a command, so the
/// call can never be allowed without a question.
pub(crate) fn names_a_rule(stray: &[String], rules: &tackle_permission::Ruleset) -> bool {
    stray.iter().any(|name| {
        rules
            .deciding("bash", name)
            .and_then(|index| rules.rules().get(index))
            // A catch-all (`bash *` ask) names no program.
            .is_some_and(|rule| match rule.effect {
                tackle_permission::Effect::Deny => true,
                tackle_permission::Effect::Ask => !rule.resource.starts_with('*'),
                tackle_permission::Effect::Allow => false,
            })
    })
}

/// The words of a command, quotes resolved, as one resource.
pub(crate) fn resource(words: &[Word]) -> String {
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    texts.join(" ")
}

/// The legacy arity rule: `<head> <first non-flag argument> *`, or `<head> *`.
pub(crate) fn save_pattern(words: &[Word]) -> Option<String> {
    let head = words.first()?.text.as_str();
    if head.is_empty() {
        return None;
    }
    Some(match words[1..].iter().find(|w| !w.text.starts_with('-')) {
        Some(sub) => format!("{head} {} *", sub.text),
        None => format!("{head} *"),
    })
}

/// The `external_directory` anchors of one path use, for every working directory it may be
/// relative to; a path that cannot be placed is added to `unresolved`.
fn anchors(path: &PathUse, place: Place<'_>, unresolved: &mut Vec<Unresolved>) -> Vec<String> {
    let mut out = Vec::new();
    for cwd in &path.cwds {
        let Some(absolute) = absolute(&path.word, cwd.as_ref(), place) else {
            let text = path.word.text.clone();
            if !unresolved.iter().any(|u| u.text == text) {
                unresolved.push(Unresolved {
                    text,
                    reason: "the path's directory is not known before the command runs",
                });
            }
            continue;
        };
        if let Some(anchor) = anchor(&absolute, path.kind, place.location)
            && !out.contains(&anchor)
        {
            out.push(anchor);
        }
    }
    out
}

/// The absolute, lexically normalised path `word` names when run from `cwd`.
fn absolute(word: &Word, cwd: Option<&Vec<String>>, place: Place<'_>) -> Option<PathBuf> {
    let path = expand(word.text.as_str(), word.tilde, place.home)?;
    if path.is_absolute() {
        return Some(location::normalize(&path));
    }
    let mut base = place.cwd.to_path_buf();
    for step in cwd? {
        let step = expand(step, step.starts_with('~'), place.home)?;
        base = location::normalize(&base.join(step));
    }
    Some(location::normalize(&base.join(path)))
}

/// `~` and `~/x` against `home`; `~user` cannot be placed.
fn expand(text: &str, tilde: bool, home: Option<&Path>) -> Option<PathBuf> {
    if !tilde {
        return Some(PathBuf::from(text));
    }
    let rest = text.strip_prefix('~')?;
    if !rest.is_empty() && !rest.starts_with('/') {
        return None;
    }
    Some(home?.join(rest.trim_start_matches('/')))
}

/// `<dir>/*` when `absolute` lies outside the Location (after symlinks), else `None`.
fn anchor(absolute: &Path, kind: PathKind, location: &Location) -> Option<String> {
    let (canonical, directory, is_dir) = match location::real_path(absolute) {
        Ok(real) => (
            real.canonical,
            real.directory,
            real.kind == Some(EntryKind::Directory),
        ),
        // An unusable path (a file as a parent, a symlink loop): judge it lexically.
        Err(_) => (
            absolute.to_path_buf(),
            absolute.parent().unwrap_or(absolute).to_path_buf(),
            false,
        ),
    };
    if location::contains(location.root(), &canonical) {
        return None;
    }
    let anchor = if kind == PathKind::Directory && is_dir {
        canonical
    } else {
        directory
    };
    Some(pattern(&anchor))
}

fn pattern(directory: &Path) -> String {
    let text = directory.to_string_lossy().replace('\\', "/");
    format!("{}/*", text.trim_end_matches('/'))
}

/// Reference BA3: absolute arguments outside `cwd` give an advisory warning naming their
/// directory, unless that directory is already asked about.
fn warnings(command: &str, cwd: &Path, asked: &BTreeSet<String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for token in tokens(command) {
        let token = unquote(token).trim_end_matches([';', ',', '|', '&']);
        let path = Path::new(token);
        if !path.is_absolute() {
            continue;
        }
        let absolute = location::normalize(path);
        // The null device, the standard streams and other device files are no directory.
        if is_device(&absolute) {
            continue;
        }
        let real = location::real_path(&absolute);
        let inside = real
            .as_ref()
            .map(|real| location::contains(cwd, &real.canonical))
            .unwrap_or(false);
        if inside {
            continue;
        }
        // A directory argument is the directory warned about (as `cd` asks about it), anything
        // else its parent.
        let directory = match real {
            Ok(real) if real.kind == Some(EntryKind::Directory) => real.canonical,
            _ => {
                let parent = absolute.parent().unwrap_or(&absolute);
                location::real_path(parent)
                    .map(|real| real.canonical)
                    .unwrap_or_else(|_| parent.to_path_buf())
            }
        };
        // `/*` names no directory worth a warning (`ls /nonexistent`).
        if directory.parent().is_none() {
            continue;
        }
        let pattern = pattern(&directory);
        if asked.contains(&pattern) || !seen.insert(pattern.clone()) {
            continue;
        }
        out.push(format!(
            "Command argument references external directory {pattern}. {WARNING_TAIL}"
        ));
    }
    out
}

/// True for paths under `/dev` and for device files, pipes and sockets anywhere.
fn is_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    path.starts_with("/dev")
        || std::fs::metadata(path).is_ok_and(|m| {
            let kind = m.file_type();
            kind.is_char_device() || kind.is_block_device() || kind.is_fifo() || kind.is_socket()
        })
}

/// Tokens as the regex `(?:[^\s"']+|"[^"]*"|'[^']*')+` finds them.
fn tokens(command: &str) -> Vec<&str> {
    let bytes = command.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at].is_ascii_whitespace() {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && !bytes[at].is_ascii_whitespace() {
            if let quote @ (b'"' | b'\'') = bytes[at] {
                match bytes[at + 1..].iter().position(|&b| b == quote) {
                    Some(close) => at += close + 2,
                    // An unmatched quote cannot start a token part: the token ends here.
                    None => break,
                }
            } else {
                at += 1;
            }
        }
        if at > start {
            out.push(&command[start..at]);
        } else {
            at += 1;
        }
    }
    out
}

fn unquote(token: &str) -> &str {
    for quote in ['"', '\''] {
        if token.len() >= 2
            && let Some(inner) = token
                .strip_prefix(quote)
                .and_then(|rest| rest.strip_suffix(quote))
        {
            return inner;
        }
    }
    token
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(texts: &[&str]) -> Vec<Word> {
        texts.iter().map(|t| Word::plain(*t)).collect()
    }

    #[test]
    fn save_patterns_follow_the_legacy_arity_rule() {
        assert_eq!(
            save_pattern(&words(&["git", "checkout", "main"])).as_deref(),
            Some("git checkout *")
        );
        assert_eq!(
            save_pattern(&words(&["ls", "-la"])).as_deref(),
            Some("ls *")
        );
        assert_eq!(
            save_pattern(&words(&["npm", "--silent", "run", "build"])).as_deref(),
            Some("npm run *")
        );
        assert_eq!(save_pattern(&words(&[""])), None);
    }

    #[test]
    fn tokens_match_the_reference_regex() {
        assert_eq!(
            tokens(r#"cat "/a b/c" '/d e' x"y z"w /f;"#),
            ["cat", r#""/a b/c""#, "'/d e'", r#"x"y z"w"#, "/f;"]
        );
        assert_eq!(tokens("a \"unclosed b"), ["a", "unclosed", "b"]);
        assert_eq!(unquote("'/x'"), "/x");
        assert_eq!(unquote("\""), "\"");
    }

    #[test]
    fn tilde_expansion() {
        let home = Path::new("/home/u");
        assert_eq!(
            expand("~/.bashrc", true, Some(home)),
            Some(PathBuf::from("/home/u/.bashrc"))
        );
        assert_eq!(
            expand("~", true, Some(home)),
            Some(PathBuf::from("/home/u"))
        );
        assert_eq!(expand("~root/x", true, Some(home)), None);
        assert_eq!(expand("~/x", true, None), None);
        assert_eq!(expand("~/x", false, None), Some(PathBuf::from("~/x")));
    }
}
