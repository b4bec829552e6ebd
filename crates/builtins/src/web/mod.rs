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

use tackle_permission::Permission;
use tackle_tool_core::Tool;

pub use convert::{decode, html_to_markdown, html_to_text};
pub use fetch::{
    BROWSER_USER_AGENT, CHALLENGE_USER_AGENT, DEFAULT_TIMEOUT_SECONDS, FetchFormat, FetchInput,
    FetchOutput, MAX_REDIRECTS, MAX_RESPONSE_BYTES, MAX_TIMEOUT_SECONDS, TRUNCATION_NOTICE,
    TimeoutSeconds, check_content_type, webfetch_tool,
};
pub use guard::{Blocked, InvalidAllowEntry, WebAccess, blocked_reason};
pub use search::{SearchProvider, WebSearchConfig, websearch_tool};

/// The host's configuration of the web tools.
#[derive(Debug, Clone, Default)]
pub struct WebServices {
    /// What webfetch may reach besides public addresses (nothing, by default).
    pub access: WebAccess,
    /// websearch's providers; with none, websearch is not offered.
    pub search: WebSearchConfig,
}

/// `webfetch`, and `websearch` when a provider is configured, in catalog order.
pub fn web_tools(permission: &Permission, services: &WebServices) -> Vec<(String, Tool)> {
    let mut tools = vec![(
        "webfetch".to_owned(),
        webfetch_tool(permission.clone(), services.access.clone()),
    )];
    if let Some(search) = websearch_tool(permission.clone(), services.search.clone()) {
        tools.push(("websearch".to_owned(), search));
    }
    tools
}
