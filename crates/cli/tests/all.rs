//! Integration tests of the `tackle` binary: real processes on real temp directories.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on broken setup

mod call;
mod tools;

use assert_cmd::Command;

pub(crate) fn tackle() -> Command {
    Command::cargo_bin("tackle").unwrap()
}
