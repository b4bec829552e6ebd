//! The environment a command runs with: the host's, minus credentials (by name and by value
//! shape, see [`secrets`](super::secrets)) and URL passwords, plus a non-interactive overlay,
//! so pagers, editors and prompts never wait for a human.
//!
//! Invariants: the overlay always wins; a credential reaches the command only when its name
//! matches the configured allow-list; every value withheld or cut is in
//! [`CommandEnv::secrets`].

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use super::secrets;
use super::tree;

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

/// Shorter values are not reported as secrets: redacting them would garble ordinary output.
pub(crate) const MIN_SECRET_BYTES: usize = 8;

/// The environment of a command, the names of the variables withheld or cut, and the secret
/// values that were.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CommandEnv {
    pub(crate) vars: Vec<(OsString, OsString)>,
    pub(crate) withheld: Vec<String>,
    /// Every withheld value, and every URL password and URL that had one, of at least
    /// [`MIN_SECRET_BYTES`]; longest first, without duplicates.
    pub(crate) secrets: Vec<String>,
}

impl CommandEnv {
    /// The value of `name` the command gets, if set (see [`value_in`]).
    pub(crate) fn get(&self, name: &str) -> Option<&OsStr> {
        value_in(&self.vars, name)
    }
}

/// The value of `name` in the environment `vars`, if set: of a name given twice, the last value,
/// as a process started with `vars` gets it.
pub(crate) fn value_in<'a>(vars: &'a [(OsString, OsString)], name: &str) -> Option<&'a OsStr> {
    vars.iter()
        .rev()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_os_str())
}

/// Builds the command environment from `base` (usually the host process's environment).
pub(crate) fn command_env(
    base: impl IntoIterator<Item = (OsString, OsString)>,
    allow: &[String],
) -> CommandEnv {
    let mut env = CommandEnv::default();
    for (key, value) in base {
        let name = key.to_string_lossy();
        if REMOVED.contains(&name.as_ref())
            || OVERLAY.iter().any(|(k, _)| *k == name)
            || name == tree::MARKER
        {
            continue;
        }
        if allowed(&name, allow) {
            env.vars.push((key, value));
            continue;
        }
        let text = value.to_string_lossy();
        let connection = secrets::connection_string_secrets(&text);
        if secrets::is_credential_name(&name)
            || secrets::is_credential_value(value.as_bytes())
            || !connection.is_empty()
        {
            // The key of a connection string is reported alone as well: a command may print
            // it without the rest.
            env.secrets
                .extend(connection.iter().map(|secret| (*secret).to_owned()));
            env.secrets.push(text.into_owned());
            env.withheld.push(name.into_owned());
            continue;
        }
        // Proxy variables may omit the scheme (`user:pw@proxy:3128`), as curl reads them.
        let bare = name.to_ascii_uppercase().ends_with("PROXY");
        let cut = value
            .to_str()
            .and_then(|text| secrets::without_passwords(text, bare));
        if let Some((kept, passwords)) = cut {
            env.withheld.push(name.into_owned());
            env.secrets.push(value.to_string_lossy().into_owned());
            for password in passwords {
                env.secrets.extend(secrets::percent_decoded(&password));
                env.secrets.push(password);
            }
            env.vars.push((key, OsString::from(kept)));
            continue;
        }
        env.vars.push((key, value));
    }
    env.secrets
        .retain(|secret| secret.len() >= MIN_SECRET_BYTES);
    env.secrets
        .sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    env.secrets.dedup();
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
    fn url_passwords_are_cut_and_every_secret_is_reported() {
        let base = vars(&[
            ("DATABASE_URL", "postgres://app:p%40ssw0rd!@db:5432/app"),
            ("http_proxy", "proxy-user:proxy-pass-1@proxy:3128"),
            ("URL", "https://example.com/a"),
            ("NEUTRAL", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            ("SENTRY_DSN", "https://abc@o1.ingest.sentry.io/1"),
            ("SHORT_TOKEN", "tiny"),
            ("TACKLE_BASH_CALL", "1-1"),
        ]);
        let env = command_env(base, &[]);
        assert_eq!(
            env.get("DATABASE_URL"),
            Some(OsStr::new("postgres://app@db:5432/app"))
        );
        assert_eq!(
            env.get("http_proxy"),
            Some(OsStr::new("proxy-user@proxy:3128"))
        );
        assert_eq!(env.get("URL"), Some(OsStr::new("https://example.com/a")));
        for gone in ["NEUTRAL", "SENTRY_DSN", "SHORT_TOKEN", "TACKLE_BASH_CALL"] {
            assert_eq!(env.get(gone), None, "{gone}");
        }
        assert_eq!(
            env.withheld,
            [
                "DATABASE_URL",
                "NEUTRAL",
                "SENTRY_DSN",
                "SHORT_TOKEN",
                "http_proxy"
            ]
        );
        // Longest first; "tiny" is too short to redact.
        assert_eq!(
            env.secrets,
            [
                "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "postgres://app:p%40ssw0rd!@db:5432/app",
                "proxy-user:proxy-pass-1@proxy:3128",
                "https://abc@o1.ingest.sentry.io/1",
                "proxy-pass-1",
                "p%40ssw0rd!",
                "p@ssw0rd!",
            ]
        );
    }

    #[test]
    fn connection_strings_with_a_key_are_withheld_and_their_keys_reported() {
        let azure = "DefaultEndpointsProtocol=https;AccountName=acct;\
                     AccountKey=c2VjcmV0LWtleQ==;EndpointSuffix=core.windows.net";
        let base = vars(&[
            ("AZURE_STORAGE_CONNECTION_STRING", azure),
            ("PWD", "/work"),
            ("OLDPWD", "/"),
            ("DB_PASS", "db-pass-value"),
        ]);
        let env = command_env(base, &[]);
        assert_eq!(env.get("AZURE_STORAGE_CONNECTION_STRING"), None);
        assert_eq!(env.get("DB_PASS"), None);
        assert_eq!(env.get("PWD"), Some(OsStr::new("/work")));
        assert_eq!(env.get("OLDPWD"), Some(OsStr::new("/")));
        assert_eq!(env.secrets, [azure, "c2VjcmV0LWtleQ==", "db-pass-value"]);
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
