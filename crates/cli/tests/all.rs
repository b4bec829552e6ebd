//! Integration tests of the `tackle` binary: real processes on real temp directories.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on broken setup

mod audit;
mod call;
mod config;
mod consume;
mod crash;
mod generate;
mod live;
mod logs;
mod nesting;
mod permission;
mod redact;
mod serve;
mod serve_http;
mod tools;
mod trust;

use std::path::Path;

use assert_cmd::Command;

/// The binary, with its data directory (managed outputs, saved approvals) in `data`, so a test
/// never writes to the user's real data directory. `data` is also the child's home, so the
/// user's own skills and configuration never reach a test.
pub(crate) fn tackle_in(data: &Path) -> Command {
    let mut command = Command::cargo_bin("tackle").unwrap();
    command
        .arg("--data-dir")
        .arg(data)
        .env("HOME", data)
        .env_remove("XDG_CONFIG_HOME")
        // Tests run at the top, even when the runner is itself a server tackle started.
        .env_remove("TACKLE_MCP_DEPTH");
    command
}

/// A Location and a data directory, both temporary.
pub(crate) struct Workspace {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) data: tempfile::TempDir,
}

impl Workspace {
    pub(crate) fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            data: tempfile::tempdir().unwrap(),
        }
    }

    /// `tackle <args> --dir <location>` with this workspace's data directory.
    pub(crate) fn tackle(&self, args: &[&str]) -> Command {
        let mut command = tackle_in(self.data.path());
        command.args(args).arg("--dir").arg(self.dir.path());
        command
    }

    pub(crate) fn write(&self, name: &str, text: &str) {
        std::fs::write(self.dir.path().join(name), text).unwrap();
    }

    /// `tackle trust <location>` with this workspace's data directory.
    pub(crate) fn trust(&self) {
        tackle_in(self.data.path())
            .arg("trust")
            .arg(self.dir.path())
            .assert()
            .code(0);
    }
}

pub(crate) fn tackle() -> Command {
    Command::cargo_bin("tackle").unwrap()
}
