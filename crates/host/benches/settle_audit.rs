//! `cargo xtask bench settle` (second part): the cost of watching a settle. The same no-op call
//! settled through a host's registry with nothing listening, then with the audit log on, with
//! a real `tracing` subscriber (fmt, info level, writing to a sink), and with both, in the same
//! run. Target: at most 1.2x.
//!
//! `tracing_subscriber::fmt` formats every span on the calling thread (its fields when the span
//! opens and is recorded, a whole line with timestamps when it closes): that cost belongs to
//! the subscriber the host chose. The bench also measures what the host controls, with a
//! subscriber that is enabled for the span but formats nothing on the caller (it visits the
//! fields and sends one message per closed span to another thread).

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

/// A subscriber layer that ships each closed span to another thread instead of formatting it
/// on the caller: it visits every field (as any subscriber must to see the values) and sends
/// the span's id and a count of what it saw through a bounded channel.
struct Shipping {
    sender: std::sync::mpsc::SyncSender<(u64, u64)>,
}

struct Visit(u64);

impl tracing::field::Visit for Visit {
    fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {
        self.0 += 1;
    }
    fn record_str(&mut self, _: &tracing::field::Field, value: &str) {
        self.0 += value.len() as u64;
    }
    fn record_u64(&mut self, _: &tracing::field::Field, value: u64) {
        self.0 += value;
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Shipping {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        attrs.record(&mut Visit(0));
    }
    fn on_record(
        &self,
        _: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut visit = Visit(0);
        values.record(&mut visit);
        black_box(visit.0);
    }
    fn on_close(&self, id: tracing::span::Id, _: tracing_subscriber::layer::Context<'_, S>) {
        let _ = self.sender.try_send((id.into_u64(), 1));
    }
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
    let (sender, receiver) = std::sync::mpsc::sync_channel(4096);
    let drain = std::thread::spawn(move || receiver.iter().count());
    let shipping = {
        use tracing_subscriber::layer::SubscriberExt as _;
        tracing_subscriber::registry()
            .with(tracing_subscriber::filter::LevelFilter::INFO)
            .with(Shipping { sender })
    };
    let shipped = tracing::subscriber::with_default(shipping, || {
        let host = build(true);
        let time = settle_time(&host);
        drop(host);
        time
    });
    let spans = drain.join().expect("drain");
    let log = std::fs::read_to_string(data.path().join("audit.jsonl")).unwrap_or_default();
    let records = log.lines().count();
    let gaps = log
        .lines()
        .filter(|line| line.contains(r#""kind":"gap""#))
        .count();
    let ratio = |time: Duration| time.as_secs_f64() / plain.as_secs_f64();
    println!("settle through a host, nothing listening: {plain:?} per call");
    println!(
        "settle with the audit log on: {audit_only:?} per call ({:.2}x)",
        ratio(audit_only)
    );
    println!(
        "settle with tracing (fmt to a sink, info, span close lines): {tracing_only:?} per call ({:.2}x)",
        ratio(tracing_only)
    );
    println!(
        "settle with tracing (fmt) and the audit log on: {watched:?} per call ({:.2}x)",
        ratio(watched)
    );
    println!(
        "settle with tracing (a layer shipping spans to a thread) and the audit log on: \
         {shipped:?} per call ({:.2}x; {spans} spans shipped)",
        ratio(shipped)
    );
    println!("  audit records written: {records} ({gaps} gap records)");
    println!(
        "ratio settle watched / unwatched: {:.2}x with fmt, {:.2}x with a shipping layer (target <= 1.2x)",
        ratio(watched),
        ratio(shipped)
    );
}
