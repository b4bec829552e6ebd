//! Integration tests of tackle-formats: every builtin, real settlements, the providers' SDKs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on broken setup

mod batch;
mod calls;
mod definitions;
mod example;
mod profile;
mod results;
mod sdk;
mod strict;
mod support;
