//! Integration tests of tackle-tool-core.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on broken setup

#[cfg(feature = "dynamic")]
mod dynamic;
mod input;
mod schemas;
mod settle;
