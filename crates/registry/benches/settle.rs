//! `cargo xtask bench settle`: the cost of the settle boundary.
//!
//! 1. A no-op tool with a small JSON input settled through `Materialization::settle`, against
//!    the same input decoded and the same output encoded directly with serde_json, in the same
//!    run. Target: settle at most 2x the bare serde round trip.
//! 2. `materialize` with 1,000 registered tools. Target: under 1 ms.

#![allow(clippy::expect_used)] // a bench may panic on broken setup

use std::hint::black_box;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_registry::{ApplicationTools, ToolRegistry};
use tackle_tool_core::{Call, Context, Execute, ShowAll, Tool, ToolError};

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
struct Input {
    path: String,
    offset: Option<u32>,
    limit: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Output {
    ok: bool,
    lines: u32,
}

struct Noop;

impl Execute for Noop {
    type Input = Input;
    type Output = Output;

    async fn execute(&self, input: Input, _ctx: &Context) -> Result<Output, ToolError> {
        Ok(noop(&input))
    }
}

fn noop(input: &Input) -> Output {
    Output {
        ok: !input.path.is_empty(),
        lines: input.limit.unwrap_or(0),
    }
}

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

/// Polls a future that must complete without waiting (a no-op tool does), so the measurement
/// is the settle boundary itself rather than an executor's scheduling.
fn ready<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => panic!("a no-op settle must not wait"),
    }
}

fn main() {
    let data = tempfile::tempdir().expect("temp dir");
    let app = ApplicationTools::new();
    let registry = ToolRegistry::new(
        &app,
        OutputStore::new(StoreConfig::in_data_dir(data.path())),
    );
    let _guard = registry
        .tools()
        .register([("noop".to_owned(), Tool::typed("no-op", Noop).build())])
        .expect("register");
    let snapshot = registry.materialize(&ShowAll);
    let call = Call::new(
        "call_1",
        "noop",
        json!({"path": "src/main.rs", "offset": 10, "limit": 200}),
    );
    let ctx = Context::new("bench").for_call("call_1");

    let iters = 50_000;
    // Warm up both paths.
    for _ in 0..iters {
        black_box(ready(snapshot.settle(&call, &ctx)).expect("settle"));
    }
    // Rounds alternate the three, so a machine that drifts during the run weighs on all alike.
    let (mut bare, mut bare_by_ref, mut settle) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..15 {
        bare.push(measure(1, iters / 5, || {
            let input: Input =
                serde_json::from_value(black_box(&call.input).clone()).expect("decode");
            let output: Value = serde_json::to_value(noop(&input)).expect("encode");
            black_box(output);
        }));
        bare_by_ref.push(measure(1, iters / 5, || {
            let input = Input::deserialize(black_box(&call.input)).expect("decode");
            let output: Value = serde_json::to_value(noop(&input)).expect("encode");
            black_box(output);
        }));
        settle.push(measure(1, iters / 5, || {
            black_box(ready(snapshot.settle(black_box(&call), &ctx)).expect("settle"));
        }));
    }
    let median = |mut samples: Vec<Duration>| {
        samples.sort();
        samples[samples.len() / 2]
    };
    let (bare, bare_by_ref, settle) = (median(bare), median(bare_by_ref), median(settle));
    let tool = Tool::typed("no-op", Noop).build();
    let tool_only = measure(9, iters, || {
        black_box(ready(tool.run_unbounded(black_box(&call), &ctx)).expect("settle"));
    });
    let store = OutputStore::new(StoreConfig::in_data_dir(data.path()));
    let output = ready(tool.run_unbounded(&call, &ctx)).expect("settle");
    let bound_only = measure(9, iters, || {
        black_box(
            store
                .bound("s", "c", black_box(output.clone()))
                .expect("bound"),
        );
    });
    let clone_only = measure(9, iters, || {
        black_box(black_box(&output).clone());
    });
    println!(
        "  of which Tool::run_unbounded alone: {tool_only:?}; OutputStore::bound alone: {bound_only:?} (incl. an output clone of {clone_only:?})"
    );
    let peer = bare.min(bare_by_ref);
    let ratio = settle.as_secs_f64() / peer.as_secs_f64();
    println!("settle (no-op tool, small input): {settle:?} per call");
    println!("bare serde round trip (decode from a cloned Value): {bare:?} per call");
    println!("bare serde round trip (decode by reference):        {bare_by_ref:?} per call");
    println!("ratio settle / fastest bare round trip: {ratio:.2}x (target <= 2.0x)");

    let mut guards = Vec::new();
    for i in 0..1000 {
        let batch = [(format!("tool_{i}"), Tool::typed("no-op", Noop).build())];
        guards.push(registry.tools().register(batch).expect("register"));
    }
    let materialize = measure(9, 200, || {
        black_box(registry.materialize(&ShowAll));
    });
    println!("materialize with 1,001 registered tools: {materialize:?} (target < 1 ms)");
}
