//! Integration tests of tackle-permission.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on broken setup

mod agents;
mod bad_input;
mod config;
mod decisions;
mod errors;
mod evaluate;
mod events;
mod explain;
mod protected;
mod regex_reference;
mod replies;
mod saved;
mod service;
mod sessions;
mod support;
mod tightening;
mod wildcard;
mod wildcard_props;
