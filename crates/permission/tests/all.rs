//! Integration tests of tackle-permission.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on broken setup

mod bad_input;
mod config;
mod errors;
mod evaluate;
mod explain;
mod protected;
mod regex_reference;
mod replies;
mod saved;
mod service;
mod support;
mod tightening;
mod wildcard;
mod wildcard_props;
