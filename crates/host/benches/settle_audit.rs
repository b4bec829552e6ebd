//! `cargo xtask bench settle` (second part): the cost of watching a settle. The same no-op call
//! settled through a host's registry with nothing listening, then with a real `tracing`
//! subscriber (fmt, info level, writing to a sink) and the audit log on, in the same run.
//! Target: at most 1.2x.

#![allow(clippy::expect_used)] // a bench may panic on broken setup

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::json;
use tackle_host::Host;
use tackle_tool_core::{Call, Context, Tool, from_fn};

/// Median of `rounds` timings of `iters` calls of `f`, per call.
fn measure(rounds: usize, iters: u32, mut f: impl FnMut()) -> Duration {
    let mut samples: Vec<Duration> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iters {
                f();
            }
            start.elapsed() / iters
        })
        .collect();
    samples.sort();
    samples[rounds / 2]
}

/// Polls a future that must complete without waiting (a no-op tool does).
fn ready<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => panic!("a no-op settle must not wait"),
    }
}

/// The per-call time of settling a no-op call through `host`.
fn settle_time(host: &Host) -> Duration {
    let noop = Tool::typed(
        "no-op",
        from_fn(|input: serde_json::Value, _| async move {
            Ok::<_, tackle_tool_core::ToolError>(input["path"].as_str().map(str::len))
        }),
    )
    .build();
    let _guard = host
        .registry()
        .tools()
        .register([("noop".to_owned(), noop)])
        .expect("register");
    let snapshot = host.materialize();
    let call = Call::new(
        "call_1",
        "noop",
        json!({"path": "src/main.rs", "offset": 10, "limit": 200}),
    );
    let ctx = Context::new("bench").for_call("call_1");
    let iters = 20_000;
    for _ in 0..iters {
        black_box(ready(snapshot.settle(&call, &ctx)).expect("settle"));
    }
    // Rounds short enough that the writer keeps up: the queue holds 4096 records.
    measure(15, 2_000, || {
        black_box(ready(snapshot.settle(black_box(&call), &ctx)).expect("settle"));
    })
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = tempfile::tempdir().expect("temp dir");
    let build = |audit: bool| {
        let mut builder = Host::builder(dir.path())
            .data_dir(data.path())
            .env(tackle_host::Environment::from_vars(
                Vec::<(String, String)>::new(),
            ))
            .only("todowrite");
        if audit {
            builder = builder.set("audit.path", json!(data.path().join("audit.jsonl")));
        }
        builder.build().expect("host")
    };
    let plain = settle_time(&build(false));
    let audit_only = {
        let host = build(true);
        let time = settle_time(&host);
        drop(host);
        time
    };
    let subscriber = || {
        tracing_subscriber::fmt()
            .with_writer(std::io::sink)
            .with_max_level(tracing::Level::INFO)
            .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
            .finish()
    };
    let tracing_only =
        tracing::subscriber::with_default(subscriber(), || settle_time(&build(false)));
    let watched = tracing::subscriber::with_default(subscriber(), || {
        let host = build(true);
        let time = settle_time(&host);
        drop(host);
        time
    });
    let log = std::fs::read_to_string(data.path().join("audit.jsonl")).unwrap_or_default();
    let records = log.lines().count();
    let gaps = log
        .lines()
        .filter(|line| line.contains(r#""kind":"gap""#))
        .count();
    let ratio = watched.as_secs_f64() / plain.as_secs_f64();
    println!("settle through a host, nothing listening: {plain:?} per call");
    println!("settle with the audit log on: {audit_only:?} per call");
    println!(
        "settle with tracing (fmt to a sink, info, span close lines): {tracing_only:?} per call"
    );
    println!("settle with tracing and the audit log on: {watched:?} per call");
    println!("  audit records written: {records} ({gaps} gap records)");
    println!("ratio settle watched / unwatched: {ratio:.2}x (target <= 1.2x)");
}
