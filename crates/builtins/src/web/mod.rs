//! The web tools, `webfetch` and `websearch` (the default-on `web` cargo feature).
//!
//! Invariants: webfetch reaches only public addresses unless [`WebAccess`] allows more,
//! checked on the address actually connected to and on every redirect; a redirect to another
//! host is asserted again; bodies are streamed with a cap. websearch goes only to configured
//! providers and never shows their credentials.

mod convert;
mod fetch;
mod guard;
pub mod search;

pub use convert::{NODE_LIMIT_NOTICE, decode, html_to_markdown, html_to_text};
pub(crate) use fetch::webfetch_tool;
pub use fetch::{
    BROWSER_USER_AGENT, CHALLENGE_USER_AGENT, DEFAULT_TIMEOUT_SECONDS, FetchFormat, FetchInput,
    FetchOutput, MAX_REDIRECTS, MAX_RESPONSE_BYTES, MAX_TIMEOUT_SECONDS, TRUNCATION_NOTICE,
    TimeoutSeconds, check_content_type,
};
pub use guard::{Blocked, InvalidAllowEntry, WebAccess, blocked_reason};
pub(crate) use search::websearch_tool;
pub use search::{SearchProvider, WebSearchConfig};

/// The host's configuration of the web tools.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct WebServices {
    /// What webfetch may reach besides public addresses (nothing, by default).
    pub access: WebAccess,
    /// websearch's providers; with none, websearch is not offered.
    pub search: WebSearchConfig,
    /// webfetch's default timeout and body cap.
    pub fetch: FetchSettings,
}

/// webfetch's limits a host may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FetchSettings {
    /// The timeout of a call that gives none, in seconds (at most [`MAX_TIMEOUT_SECONDS`]).
    pub default_timeout_seconds: u64,
    /// Bodies are cut after this many bytes.
    pub max_response_bytes: usize,
}

impl Default for FetchSettings {
    fn default() -> Self {
        Self {
            default_timeout_seconds: DEFAULT_TIMEOUT_SECONDS,
            max_response_bytes: MAX_RESPONSE_BYTES,
        }
    }
}

impl FetchSettings {
    /// The default settings with the given timeout and cap.
    pub fn new(default_timeout_seconds: u64, max_response_bytes: usize) -> Self {
        Self {
            default_timeout_seconds,
            max_response_bytes,
        }
    }
}
