//! Integration tests of tackle-builtins.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[cfg(feature = "apply-patch")]
mod apply_patch;
#[cfg(feature = "apply-patch")]
mod apply_patch_permission;
#[cfg(feature = "bash")]
mod bash;
#[cfg(feature = "bash")]
mod bash_bypass;
#[cfg(feature = "bash")]
mod bash_escape;
#[cfg(feature = "bash")]
mod bash_hang;
#[cfg(feature = "bash")]
mod bash_jobs;
#[cfg(feature = "bash")]
mod bash_permission;
#[cfg(feature = "bash")]
mod bash_requests;
#[cfg(feature = "bash")]
mod bash_secrets;
#[cfg(feature = "bash")]
mod bash_support;
#[cfg(feature = "bash")]
mod bash_terminal;
mod compat;
mod fault;
mod files;
mod fuzz_regressions;
#[cfg(all(
    feature = "bash",
    feature = "search",
    feature = "apply-patch",
    feature = "web"
))]
mod input_limits;
mod interactive_support;
mod question;
#[cfg(feature = "search")]
mod search;
mod skill;
#[cfg(any(feature = "search", feature = "apply-patch"))]
mod steps;
mod todowrite;
#[cfg(feature = "web")]
mod web_convert;
#[cfg(feature = "web")]
mod web_server;
#[cfg(feature = "web")]
mod webfetch;
#[cfg(feature = "web")]
mod websearch;
