//! Integration tests of tackle-registry: real tools, a real output store in a temp directory.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on broken setup

mod batch;
mod changes;
mod concurrency;
mod model;
mod registration;
mod session;
mod settle;
mod support;
mod trace;
