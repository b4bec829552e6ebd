//! Integration tests of tackle-output-store: real files in temporary directories.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on broken setup

mod bound;
mod cleanup;
mod common;
mod faults;
mod frames;
mod props;
mod reading;
mod redact;
mod snapshots;
mod stream;
