//! The environment a command runs with: the host's, minus credential-looking variables, plus a
//! non-interactive overlay, so pagers, editors and prompts never wait for a human.
//!
//! Invariants: the overlay always wins; a credential-looking variable reaches the command only
//! when its name matches the configured allow-list.

use std::ffi::{OsStr, OsString};

/// Variables set for every command, so that no pager, editor or prompt waits for input.
pub(crate) const OVERLAY: &[(&str, &str)] = &[
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("MANPAGER", "cat"),
    ("SYSTEMD_PAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("GIT_SEQUENCE_EDITOR", "true"),
    ("EDITOR", "true"),
    ("VISUAL", "true"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_MERGE_AUTOEDIT", "no"),
    ("GCM_INTERACTIVE", "never"),
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("PIP_NO_INPUT", "1"),
    ("PYTHONIOENCODING", "utf-8"),
    ("NO_COLOR", "1"),
    ("TERM", "dumb"),
];

/// Variables removed because they force colour or interaction back on.
const REMOVED: &[&str] = &["FORCE_COLOR", "CLICOLOR_FORCE"];

/// `_`-separated name parts that mark a credential (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`).
const SECRET_PARTS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "APIKEY",
    "CREDENTIAL",
    "CREDENTIALS",
];

/// Name endings that mark a credential even without a separator (`PGPASSWORD`, `OPENAI_KEY`).
const SECRET_ENDINGS: &[&str] = &["TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "_KEY"];

/// Whole names that carry credentials without saying so.
const SECRET_NAMES: &[&str] = &["MYSQL_PWD"];

/// True when `name` looks like it holds a credential.
pub(crate) fn is_credential(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if SECRET_NAMES.contains(&upper.as_str()) {
        return true;
    }
    if SECRET_ENDINGS.iter().any(|end| upper.ends_with(end)) {
        return true;
    }
    let parts: Vec<&str> = upper.split('_').collect();
    parts.iter().any(|part| SECRET_PARTS.contains(part))
        || parts.windows(2).any(|pair| {
            matches!(
                pair,
                ["API", "KEY"] | ["PRIVATE", "KEY"] | ["ACCESS", "KEY"] | ["SESSION", "KEY"]
            )
        })
}

/// True when `name` matches one of the allow-list patterns (`*` matches any run).
pub(crate) fn allowed(name: &str, allow: &[String]) -> bool {
    allow
        .iter()
        .any(|pattern| glob(pattern.as_bytes(), name.as_bytes()))
}

/// `*`-only wildcard match, linear in practice for the short names involved.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

/// The environment of a command, and the credential names that were withheld.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CommandEnv {
    pub(crate) vars: Vec<(OsString, OsString)>,
    pub(crate) withheld: Vec<String>,
}

impl CommandEnv {
    /// The value of `name`, if set.
    pub(crate) fn get(&self, name: &str) -> Option<&OsStr> {
        self.vars
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_os_str())
    }
}

/// Builds the command environment from `base` (usually the host process's environment).
pub(crate) fn command_env(
    base: impl IntoIterator<Item = (OsString, OsString)>,
    allow: &[String],
) -> CommandEnv {
    let mut env = CommandEnv::default();
    for (key, value) in base {
        let name = key.to_string_lossy();
        if REMOVED.contains(&name.as_ref()) || OVERLAY.iter().any(|(k, _)| *k == name) {
            continue;
        }
        if is_credential(&name) && !allowed(&name, allow) {
            env.withheld.push(name.into_owned());
            continue;
        }
        env.vars.push((key, value));
    }
    env.vars.extend(
        OVERLAY
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    env.withheld.sort();
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn credentials_are_recognised() {
        for name in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "NPM_TOKEN",
            "CARGO_REGISTRY_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "AWS_SESSION_TOKEN",
            "PGPASSWORD",
            "DB_PASSWORD",
            "CLIENT_SECRET",
            "STRIPE_KEY",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "MYSQL_PWD",
            "my_api_key",
        ] {
            assert!(is_credential(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "TOKENIZERS_PARALLELISM",
            "SSH_AUTH_SOCK",
            "KEYBOARD",
            "LANG",
            "GIT_AUTHOR_NAME",
        ] {
            assert!(!is_credential(name), "{name}");
        }
    }

    #[test]
    fn credentials_are_withheld_unless_allowed() {
        let base = vars(&[
            ("PATH", "/bin"),
            ("GITHUB_TOKEN", "t"),
            ("OPENAI_API_KEY", "k"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
        ]);
        let env = command_env(base, &["GITHUB_TOKEN".to_owned(), "AWS_*".to_owned()]);
        assert_eq!(env.get("PATH"), Some(OsStr::new("/bin")));
        assert_eq!(env.get("GITHUB_TOKEN"), Some(OsStr::new("t")));
        assert_eq!(env.get("AWS_SECRET_ACCESS_KEY"), Some(OsStr::new("s")));
        assert_eq!(env.get("OPENAI_API_KEY"), None);
        assert_eq!(env.withheld, vec!["OPENAI_API_KEY".to_owned()]);
    }

    #[test]
    fn the_overlay_wins_and_colour_forcing_is_removed() {
        let base = vars(&[
            ("PAGER", "less"),
            ("GIT_PAGER", "delta"),
            ("FORCE_COLOR", "1"),
            ("TERM", "xterm-256color"),
        ]);
        let env = command_env(base, &[]);
        assert_eq!(env.get("PAGER"), Some(OsStr::new("cat")));
        assert_eq!(env.get("GIT_PAGER"), Some(OsStr::new("cat")));
        assert_eq!(env.get("GIT_TERMINAL_PROMPT"), Some(OsStr::new("0")));
        assert_eq!(env.get("TERM"), Some(OsStr::new("dumb")));
        assert_eq!(env.get("FORCE_COLOR"), None);
        let pagers = env.vars.iter().filter(|(k, _)| k == "PAGER").count();
        assert_eq!(pagers, 1);
    }

    #[test]
    fn glob_patterns() {
        assert!(glob(b"AWS_*", b"AWS_SECRET"));
        assert!(glob(b"*_TOKEN", b"GH_TOKEN"));
        assert!(glob(b"*", b""));
        assert!(glob(b"A*B*C", b"AxxBxxC"));
        assert!(!glob(b"A*B*C", b"AxxBxx"));
        assert!(!glob(b"GH_TOKEN", b"GH_TOKENS"));
    }
}
