//! Integration tests of tackle-builtins.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod apply_patch;
mod apply_patch_permission;
mod bash;
mod bash_hang;
mod bash_permission;
mod bash_support;
mod files;
mod interactive_support;
mod question;
mod search;
mod skill;
mod todowrite;
#[cfg(feature = "web")]
mod web_convert;
#[cfg(feature = "web")]
mod web_server;
#[cfg(feature = "web")]
mod webfetch;
#[cfg(feature = "web")]
mod websearch;
