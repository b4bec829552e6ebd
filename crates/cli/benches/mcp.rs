//! `cargo xtask bench mcp`: `tackle serve` against the official MCP filesystem server
//! (`@modelcontextprotocol/server-filesystem`, `read_text_file`), driven by the same client —
//! the official Python SDK (`mcp_bench.py`) — on the same 100-line file in the same run.
//!
//! 1. Median latency of one `read` over 1,000 sequential calls. Goal: at most 0.5x the peer's.
//! 2. Throughput of 16 concurrent clients (one server process each, as stdio gives).
//! 3. Spawn to the `initialize` answer, over raw pipes. Goal: at most 20 ms.
//! 4. The server's RSS after 100 calls and after 10,000 more (no growth).
//!
//! Sequential calls alternate between the two servers in blocks of 50, over the SDK and over
//! raw pipes alike, so a machine that drifts during the run weighs on both.
//!
//! Measured (2 shared cores, the installed build): median call 422 vs 849 µs (0.50x); raw
//! pipes 127 vs 647 µs (0.20x); 16 clients 3.6x the peer's calls/s; spawn to `initialize`
//! 1.2 ms vs 273 ms; RSS 14 MiB after 100 calls and after 10,000 more (the peer: 72 → 103 MiB).
//! Over many runs the ratio moves between about 0.35x and 0.52x, with the peer's time.
//! What separates the two latencies is the server; what keeps the ratio near 0.5x is the
//! Python client's own share of a call, the same for both.
//!
//! tackle is the binary as `cargo xtask install` builds it (see `installed`). The client is
//! the venv `.ci/mcp-clients.sh` creates; the peer is the copy that script installs in
//! `target/mcp-node`, else one in `target/bench-peers` (`npm install --prefix
//! target/bench-peers @modelcontextprotocol/server-filesystem`); without it tackle is measured
//! alone.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a bench may panic on broken setup

mod installed;

use std::path::Path;
use std::process::Command;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = root.join("target/mcp-venv/bin/python");
    assert!(
        python.exists(),
        "the MCP Python client is missing at {}: run .ci/mcp-clients.sh",
        python.display()
    );
    // The pinned copy `.ci/mcp-clients.sh` installs for the client tests, else a bench copy.
    let peer = ["target/mcp-node", "target/bench-peers"]
        .iter()
        .map(|prefix| {
            root.join(prefix)
                .join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
        })
        .find(|peer| peer.exists());
    let peer_arg = if let Some(peer) = peer {
        peer.display().to_string()
    } else {
        eprintln!(
            "bench mcp: the peer is missing; timing tackle alone. Get it with \
             .ci/mcp-clients.sh, or: npm install --prefix target/bench-peers \
             @modelcontextprotocol/server-filesystem"
        );
        "-".to_owned()
    };
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/mcp_bench.py");
    let status = Command::new(python)
        .arg(script)
        .arg(installed::tackle())
        .arg(peer_arg)
        .arg(work.path())
        .arg(data.path())
        .arg("1000")
        .arg("10000")
        .env("HOME", data.path())
        .status()
        .unwrap();
    assert!(status.success(), "the bench client failed: {status}");
}
