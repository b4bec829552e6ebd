//! `cargo xtask bench mcp-client`: what tackle adds to an MCP call.
//!
//! The "everything" reference server's `echo`, called through tackle (a registry snapshot's
//! settle: input validation, the gate, the rmcp call, result mapping, bounding) against a
//! direct rmcp client call of the same tool on a second instance of the same server, in the
//! same run, rounds interleaved. Target: at most 1.1x the direct call. The server comes from
//! `.ci/mcp-clients.sh`; without it the bench says so and measures nothing.

#![allow(clippy::expect_used)] // a bench may panic on broken setup

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use tackle_mcp_client::{OpenGate, Options, ServerConfig, Servers};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_registry::{ApplicationTools, ToolRegistry};
use tackle_tool_core::{Call, Context, ShowAll};

const ROUNDS: usize = 15;
const CALLS: u32 = 200;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../target/mcp-node/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    if !script.exists() {
        println!(
            "peer missing: the everything server is not installed at {} (run .ci/mcp-clients.sh)",
            script.display()
        );
        return;
    }
    let command = vec!["node".to_owned(), script.display().to_string()];
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let data = tempfile::TempDir::new().expect("temp dir");
        let registry = ToolRegistry::new(
            &ApplicationTools::default(),
            OutputStore::new(StoreConfig::in_data_dir(data.path())),
        );
        let servers = Servers::start(
            vec![("ev".to_owned(), ServerConfig::local(command.clone()))],
            &registry.tools(),
            Options::new(Arc::new(OpenGate)),
        );
        servers.ready().await;
        // The server adds a tool after the handshake; measure on the settled catalog.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let snapshot = registry.materialize(&ShowAll);
        let ctx = Context::new("ses_bench");
        let call = Call::new("c", "ev_echo", json!({"message": "hello"}));

        let mut cmd = tokio::process::Command::new(&command[0]);
        cmd.arg(&command[1]).stderr(std::process::Stdio::null());
        let direct =
            ().serve(TokioChildProcess::new(cmd).expect("spawn"))
                .await
                .expect("handshake");
        let params = || {
            let mut params = CallToolRequestParams::new("echo");
            params.arguments = json!({"message": "hello"}).as_object().cloned();
            params
        };

        // Warm both paths (schema compilation, the servers' JITs).
        for _ in 0..CALLS {
            let settled = snapshot.settle(&call, &ctx).await.expect("settle");
            assert!(!settled.is_error(), "{:?}", settled.result());
            direct.call_tool(params()).await.expect("direct call");
        }
        let (mut tackle, mut peer) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let start = Instant::now();
            for _ in 0..CALLS {
                snapshot.settle(&call, &ctx).await.expect("settle");
            }
            tackle.push(start.elapsed() / CALLS);
            let start = Instant::now();
            for _ in 0..CALLS {
                direct.call_tool(params()).await.expect("direct call");
            }
            peer.push(start.elapsed() / CALLS);
        }
        let (tackle, peer) = (median(tackle), median(peer));
        let ratio = tackle.as_secs_f64() / peer.as_secs_f64();
        println!("tackle settle of an MCP tool (everything/echo): {tackle:?} per call");
        println!("direct rmcp client call (same server, same tool): {peer:?} per call");
        println!("added latency per call: {:?}", tackle.saturating_sub(peer));
        println!("ratio tackle / direct rmcp: {ratio:.2}x (target <= 1.1x)");
        let _ = direct.cancel().await;
        drop(servers);
    });
}
