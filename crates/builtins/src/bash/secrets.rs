//! What counts as a credential in an environment variable: by its name (`GITHUB_TOKEN`,
//! `SENTRY_DSN`, `BW_SESSION`, `DB_PASS`, `GITLAB_PAT`), by the shape of its value (`sk-…`,
//! `ghp_…`, `AKIA…`, a JWT, a private key, a connection string carrying `AccountKey=`,
//! `SharedAccessKey=`, `Password=` or `Pwd=`), and the password of a URL's user information
//! (`postgres://u:pw@host`), which is removed while the rest of the URL stays usable.
//!
//! Invariant: every value withheld or cut here is reported whole, so a host can redact it from
//! what tools return (a command may still find it elsewhere, e.g. in a file).

/// `_`-separated name parts that mark a credential (`GITHUB_TOKEN`, `SLACK_WEBHOOK_URL`).
const SECRET_PARTS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    // The usual short forms: `DB_PASS`, `MYSQL_PWD`, `GITLAB_PAT` (a personal access token).
    "PASS",
    "PWD",
    "PAT",
    "PASSPHRASE",
    "APIKEY",
    "CREDENTIAL",
    "CREDENTIALS",
    "AUTH",
    "AUTHORIZATION",
    "BEARER",
    "COOKIE",
    "COOKIES",
    "JWT",
    "DSN",
    "WEBHOOK",
    "WEBHOOKS",
];

/// Name endings that mark a credential even without a separator (`PGPASSWORD`, `OPENAI_KEY`,
/// `BW_SESSION`).
const SECRET_ENDINGS: &[&str] = &[
    "TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "_KEY", "_SESSION",
];

/// Whole names that carry credentials without saying so; `KRB5CCNAME` names a ticket cache.
const SECRET_NAMES: &[&str] = &["KRB5CCNAME"];

/// Name prefixes of credentials (1Password's `OP_SESSION_<account>`).
const SECRET_PREFIXES: &[&str] = &["OP_SESSION_"];

/// Names that match the rules above but hold nothing secret (`PWD` is the shell's working
/// directory).
const NOT_SECRET: &[&str] = &["DESKTOP_SESSION", "PWD"];

/// True when `name` looks like it holds a credential.
pub(crate) fn is_credential_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if NOT_SECRET.contains(&upper.as_str()) {
        return false;
    }
    if SECRET_NAMES.contains(&upper.as_str())
        || SECRET_PREFIXES.iter().any(|p| upper.starts_with(p))
        || SECRET_ENDINGS.iter().any(|end| upper.ends_with(end))
    {
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

/// Characters a key's body is made of.
#[derive(Debug, Clone, Copy)]
enum Body {
    /// `[A-Za-z0-9]`
    Alnum,
    /// `[A-Za-z0-9_-]`
    Word,
    /// `[A-Z0-9]`
    Upper,
}

impl Body {
    fn admits(self, byte: u8) -> bool {
        match self {
            Self::Alnum => byte.is_ascii_alphanumeric(),
            Self::Word => byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-',
            Self::Upper => byte.is_ascii_uppercase() || byte.is_ascii_digit(),
        }
    }
}

/// Well-known key formats: a prefix, then at least so many characters of the body.
const KEY_SHAPES: &[(&str, usize, Body)] = &[
    // OpenAI, Anthropic (`sk-ant-…`), many others.
    ("sk-", 20, Body::Word),
    // Stripe.
    ("sk_live_", 16, Body::Alnum),
    ("sk_test_", 16, Body::Alnum),
    ("rk_live_", 16, Body::Alnum),
    // GitHub.
    ("ghp_", 30, Body::Alnum),
    ("gho_", 30, Body::Alnum),
    ("ghu_", 30, Body::Alnum),
    ("ghs_", 30, Body::Alnum),
    ("ghr_", 30, Body::Alnum),
    ("github_pat_", 20, Body::Word),
    // GitLab.
    ("glpat-", 20, Body::Word),
    // Slack.
    ("xoxb-", 10, Body::Word),
    ("xoxp-", 10, Body::Word),
    ("xoxa-", 10, Body::Word),
    ("xoxe-", 10, Body::Word),
    ("xoxr-", 10, Body::Word),
    ("xoxs-", 10, Body::Word),
    ("xapp-", 10, Body::Word),
    // AWS access key ids.
    ("AKIA", 16, Body::Upper),
    ("ASIA", 16, Body::Upper),
    // Google API keys.
    ("AIza", 35, Body::Word),
    // Hugging Face, npm, PyPI.
    ("hf_", 30, Body::Alnum),
    ("npm_", 36, Body::Alnum),
    ("pypi-", 50, Body::Word),
];

/// True when `value` contains something shaped like a key, a token, a JWT or a private key.
pub(crate) fn is_credential_value(value: &[u8]) -> bool {
    if contains(value, b"PRIVATE KEY-----") {
        return true;
    }
    (0..value.len()).any(|at| {
        // A key starts a word: `task-…` does not hold `sk-…`.
        if at > 0 && value[at - 1].is_ascii_alphanumeric() {
            return false;
        }
        let rest = &value[at..];
        is_jwt(rest)
            || KEY_SHAPES.iter().any(|(prefix, min, body)| {
                rest.starts_with(prefix.as_bytes())
                    && rest[prefix.len()..]
                        .iter()
                        .take_while(|&&b| body.admits(b))
                        .count()
                        >= *min
            })
    })
}

/// Keys of a `key=value;…` connection string whose value is a credential (Azure storage and
/// Service Bus, ADO.NET and ODBC), compared ignoring ASCII case.
const CONNECTION_SECRET_KEYS: &[&str] = &["AccountKey", "SharedAccessKey", "Password", "Pwd"];

/// The credentials of a connection string (`AccountName=x;AccountKey=…;`): the values of its
/// [`CONNECTION_SECRET_KEYS`], empty when it has none. The pairs are `;`-separated; a value
/// keeps any `=` it holds (base64 padding).
pub(crate) fn connection_string_secrets(value: &str) -> Vec<&str> {
    value
        .split(';')
        .filter_map(|pair| pair.split_once('='))
        .filter(|(key, secret)| {
            !secret.trim().is_empty()
                && CONNECTION_SECRET_KEYS
                    .iter()
                    .any(|known| key.trim().eq_ignore_ascii_case(known))
        })
        .map(|(_, secret)| secret.trim())
        .collect()
}

/// `eyJ…` (base64 of `{"`): a header, a payload and a signature, base64url, dot-separated.
fn is_jwt(text: &[u8]) -> bool {
    if !text.starts_with(b"eyJ") {
        return false;
    }
    let token: Vec<&[u8]> = text
        .split(|b| !(Body::Word.admits(*b) || *b == b'.'))
        .next()
        .unwrap_or_default()
        .split(|b| *b == b'.')
        .collect();
    token.len() >= 3 && token[0].len() >= 10 && token[1].len() >= 10
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// `value` with the password of every URL's user information removed
/// (`http://u:pw@proxy` → `http://u@proxy`), and the passwords removed; `None` when there is
/// none. `bare` also reads a value without `scheme://` as user information and host (proxy
/// variables, which curl reads that way).
pub(crate) fn without_passwords(value: &str, bare: bool) -> Option<(String, Vec<String>)> {
    let mut out = String::with_capacity(value.len());
    let mut passwords = Vec::new();
    let mut rest = value;
    let mut first = true;
    loop {
        let authority_at = match rest.find("://") {
            Some(at) => at + 3,
            None if first && bare => 0,
            None => break,
        };
        first = false;
        out.push_str(&rest[..authority_at]);
        rest = &rest[authority_at..];
        let end = rest
            .find(|c: char| matches!(c, '/' | '?' | '#' | ',' | ';') || c.is_whitespace())
            .unwrap_or(rest.len());
        let authority = &rest[..end];
        match authority.rfind('@').and_then(|at| {
            let user_info = &authority[..at];
            let colon = user_info.find(':')?;
            Some((colon, at))
        }) {
            Some((colon, at)) if colon + 1 < at => {
                passwords.push(authority[colon + 1..at].to_owned());
                out.push_str(&authority[..colon]);
                out.push_str(&authority[at..]);
            }
            _ => out.push_str(authority),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    (!passwords.is_empty()).then_some((out, passwords))
}

/// `%xx` escapes decoded, when that gives different, valid UTF-8.
pub(crate) fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[at] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(at + 1).copied().and_then(hex),
                bytes.get(at + 2).copied().and_then(hex),
            )
        {
            out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'%'));
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out)
        .ok()
        .filter(|decoded| decoded != text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names() {
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
            "DB_PASS",
            "db_pass",
            "SMTP_PASSWD",
            "REDIS_PWD",
            "GITLAB_PAT",
            "AZURE_DEVOPS_PAT",
            "STORAGE_KEY",
            "my_api_key",
            "SENTRY_DSN",
            "SLACK_WEBHOOK_URL",
            "COOKIE",
            "SESSION_COOKIE",
            "JWT",
            "JWT_TOKEN",
            "BW_SESSION",
            "OP_SESSION_my_team",
            "SSH_AUTH_SOCK",
            "BASIC_AUTH",
            "KRB5CCNAME",
        ] {
            assert!(is_credential_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "PWD",
            "OLDPWD",
            "pwd",
            "PATCH_LEVEL",
            "PASSES",
            "COMPASS_DIR",
            "PATH_PREFIX",
            "BYPASS_CACHE",
            "LANG",
            "TOKENIZERS_PARALLELISM",
            "KEYBOARD",
            "LESSKEY",
            "GIT_AUTHOR_NAME",
            "XAUTHORITY",
            "DESKTOP_SESSION",
            "XDG_SESSION_ID",
            "DBUS_SESSION_BUS_ADDRESS",
            "CARGO_HOME",
            "CARGO_TARGET_DIR",
            "URL",
            "DATABASE_URL",
            "HTTP_PROXY",
        ] {
            assert!(!is_credential_name(name), "{name}");
        }
    }

    #[test]
    fn credential_values() {
        for value in [
            "sk-proj-abcdefghijklmnopqrstuvwxyz0123",
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "github_pat_11ABCDEFG0abcdefghijklmnop_qrstuvwxyz",
            "glpat-abcdefghijklmnopqrst",
            "AKIAIOSFODNN7EXAMPLE",
            "xoxb-1234567890-abcdefghij",
            "xoxp-1234567890-abcdefghij",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl",
            "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
            "hf_abcdefghijklmnopqrstuvwxyz0123456",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
            "Bearer sk-abcdefghijklmnopqrstuvwxyz",
            "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        ] {
            assert!(is_credential_value(value.as_bytes()), "{value}");
        }
        for value in [
            "/usr/local/bin:/usr/bin:/bin",
            "en_US.UTF-8",
            "task-force-abcdefghijklmnopqrstuvwxyz",
            "sk-short",
            "ghp_short",
            "AKIA-not-a-key",
            "eyJ",
            "https://example.com/path?q=1",
            "xterm-256color",
        ] {
            assert!(!is_credential_value(value.as_bytes()), "{value}");
        }
    }

    #[test]
    fn connection_string_credentials() {
        let azure = "DefaultEndpointsProtocol=https;AccountName=acct;\
                     AccountKey=c2VjcmV0LWtleS0xMjM0NTY3ODkw==;EndpointSuffix=core.windows.net";
        assert_eq!(
            connection_string_secrets(azure),
            ["c2VjcmV0LWtleS0xMjM0NTY3ODkw=="]
        );
        assert_eq!(
            connection_string_secrets(
                "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;\
                 SharedAccessKey=abc123def456="
            ),
            ["abc123def456="]
        );
        assert_eq!(
            connection_string_secrets("Server=db;User Id=app; password = hunter2-long ;"),
            ["hunter2-long"]
        );
        assert_eq!(
            connection_string_secrets("Driver={x};Uid=app;PWD=odbc-secret"),
            ["odbc-secret"]
        );
        for plain in [
            "AccountName=acct;EndpointSuffix=core.windows.net",
            "Password=;Server=db",
            "SharedAccessKeyName=Root",
            "/usr/bin:/bin",
            "PWD",
            "key=value",
        ] {
            assert!(connection_string_secrets(plain).is_empty(), "{plain}");
        }
    }

    #[test]
    fn url_passwords_are_removed() {
        let cut = |value: &str, bare: bool| without_passwords(value, bare);
        assert_eq!(
            cut("postgres://app:s3cr3t-pw@db.internal:5432/app", false),
            Some((
                "postgres://app@db.internal:5432/app".to_owned(),
                vec!["s3cr3t-pw".to_owned()]
            ))
        );
        assert_eq!(
            cut("http://u:p%40ss@proxy:3128, https://v:other@proxy2", false),
            Some((
                "http://u@proxy:3128, https://v@proxy2".to_owned(),
                vec!["p%40ss".to_owned(), "other".to_owned()]
            ))
        );
        // An `@` in the password, unescaped: the last one ends the user information.
        assert_eq!(
            cut("https://u:a@b@host/x", false),
            Some(("https://u@host/x".to_owned(), vec!["a@b".to_owned()]))
        );
        assert_eq!(
            cut("user:hunter22@proxy:8080", true),
            Some(("user@proxy:8080".to_owned(), vec!["hunter22".to_owned()]))
        );
        assert_eq!(cut("user:hunter22@proxy:8080", false), None);
        for plain in [
            "https://example.com/a:b@c",
            "postgres://app@db/app",
            "http://proxy:3128",
            "https://u:@host",
            "no url here",
        ] {
            assert_eq!(cut(plain, true), None, "{plain}");
        }
        assert_eq!(percent_decoded("p%40ss"), Some("p@ss".to_owned()));
        assert_eq!(percent_decoded("plain"), None);
        assert_eq!(percent_decoded("bad%zz"), None);
    }
}
