//! `cargo xtask bench settle` (second part): the cost of watching a settle. Two calls settled
//! through a host: a no-op tool (the boundary alone, where any watcher's fixed cost shows
//! most) and `read` of a 100-line file (the smallest real call). Each is measured with nothing
//! listening, with the audit log on, with a real `tracing` subscriber (fmt, info level, writing
//! to a sink), and with both; the setups alternate round by round in the same run. Target: at
//! most 1.2x.
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

/// Polls a future that must complete without waiting (a no-op tool does).
fn ready<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => panic!("a no-op settle must not wait"),
    }
}

/// One watching setup: a host (with or without the audit log), the subscriber its calls run
/// under (if any), and the two calls measured, ready to settle.
struct Setup {
    name: &'static str,
    /// Kept alive for the calls: the snapshot's tools use its services.
    _host: Host,
    dispatch: Option<tracing::Dispatch>,
    runtime: tokio::runtime::Runtime,
    _noop: tackle_registry::Registration,
    snapshot: tackle_registry::Materialization,
    noop: Call,
    read: Call,
    ctx: Context,
    noop_times: Vec<Duration>,
    read_times: Vec<Duration>,
}

impl Setup {
    fn new(name: &'static str, host: Host, dispatch: Option<tracing::Dispatch>) -> Self {
        // A no-op tool, so that what is measured is the settle boundary and its watchers.
        let noop = Tool::typed(
            "no-op",
            from_fn(|input: serde_json::Value, _| async move {
                Ok::<_, tackle_tool_core::ToolError>(input["path"].as_str().map(str::len))
            }),
        )
        .build();
        let guard = host
            .registry()
            .tools()
            .register([("noop".to_owned(), noop)])
            .expect("register");
        let snapshot = host.materialize();
        Self {
            name,
            dispatch,
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime"),
            _noop: guard,
            snapshot,
            noop: Call::new(
                "call_1",
                "noop",
                json!({"path": "src/main.rs", "offset": 10, "limit": 200}),
            ),
            // The smallest real call: `read` of a 100-line file in the Location.
            read: Call::new("call_1", "read", json!({"path": "file.txt"})),
            ctx: Context::new("bench").for_call("call_1"),
            _host: host,
            noop_times: Vec::new(),
            read_times: Vec::new(),
        }
    }

    fn watched<T>(&self, f: impl FnOnce() -> T) -> T {
        match &self.dispatch {
            Some(dispatch) => tracing::dispatcher::with_default(dispatch, f),
            None => f(),
        }
    }

    /// One round: `noop_calls` no-op calls (few enough that the audit writer keeps up: its
    /// queue holds 4096 records), then `read_calls` reads, each timed per call.
    fn round(&mut self, noop_calls: u32, read_calls: u32) {
        let (noop, read) = self.watched(|| {
            let start = Instant::now();
            for _ in 0..noop_calls {
                black_box(
                    ready(self.snapshot.settle(black_box(&self.noop), &self.ctx)).expect("settle"),
                );
            }
            let noop = start.elapsed() / noop_calls;
            let start = Instant::now();
            for _ in 0..read_calls {
                let settlement = self
                    .runtime
                    .block_on(self.snapshot.settle(black_box(&self.read), &self.ctx))
                    .expect("settle");
                assert!(!settlement.is_error(), "{settlement:?}");
                black_box(settlement);
            }
            (noop, start.elapsed() / read_calls)
        });
        self.noop_times.push(noop);
        self.read_times.push(read);
    }

    fn medians(&self) -> (Duration, Duration) {
        (median(&self.noop_times), median(&self.read_times))
    }
}

fn median(samples: &[Duration]) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

/// A subscriber layer that ships each closed span to another thread instead of formatting it
/// on the caller: it visits every field (as any subscriber must to see the values) and leaves
/// the span's id and a count of what it saw in a bounded buffer that a thread empties every
/// millisecond (waking a thread per span would cost the caller a system call).
struct Shipping {
    shipped: std::sync::Arc<std::sync::Mutex<Vec<(u64, u64)>>>,
}

/// Most spans waiting in [`Shipping`]'s buffer; more are dropped.
const SHIPPING_BUFFER: usize = 4096;

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
        if let Ok(mut shipped) = self.shipped.lock()
            && shipped.len() < SHIPPING_BUFFER
        {
            shipped.push((id.into_u64(), 1));
        }
    }
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = tempfile::tempdir().expect("temp dir");
    let text: String = (1..=100)
        .map(|n| format!("line {n}: the quick brown fox jumps over the lazy dog\n"))
        .collect();
    std::fs::write(dir.path().join("file.txt"), text).expect("file");
    let build = |audit: Option<&str>| {
        let mut builder = Host::builder(dir.path())
            .data_dir(data.path())
            .env(tackle_host::Environment::from_vars(
                Vec::<(String, String)>::new(),
            ))
            .only("read");
        if let Some(file) = audit {
            builder = builder.set("audit.path", json!(data.path().join(file)));
        }
        builder.build().expect("host")
    };
    let fmt = || {
        tracing::Dispatch::new(
            tracing_subscriber::fmt()
                .with_writer(std::io::sink)
                .with_max_level(tracing::Level::INFO)
                .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
                .finish(),
        )
    };
    let shipped = std::sync::Arc::new(std::sync::Mutex::new(Vec::with_capacity(SHIPPING_BUFFER)));
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let drain = {
        let (shipped, done) = (
            std::sync::Arc::clone(&shipped),
            std::sync::Arc::clone(&done),
        );
        std::thread::spawn(move || {
            let mut spare = Vec::with_capacity(SHIPPING_BUFFER);
            let mut count = 0;
            loop {
                let finished = done.load(std::sync::atomic::Ordering::Relaxed);
                std::mem::swap(&mut *shipped.lock().expect("buffer"), &mut spare);
                count += spare.len();
                spare.clear();
                if finished {
                    return count;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    let shipping = {
        use tracing_subscriber::layer::SubscriberExt as _;
        tracing::Dispatch::new(
            tracing_subscriber::registry()
                .with(tracing_subscriber::filter::LevelFilter::INFO)
                .with(Shipping { shipped }),
        )
    };
    let mut setups = vec![
        Setup::new("nothing listening", build(None), None),
        Setup::new("the audit log on", build(Some("a.jsonl")), None),
        Setup::new(
            "tracing (fmt to a sink, info, span close lines)",
            build(None),
            Some(fmt()),
        ),
        Setup::new(
            "tracing (fmt) and the audit log on",
            build(Some("b.jsonl")),
            Some(fmt()),
        ),
        Setup::new(
            "tracing (a layer shipping spans to a thread) and the audit log on",
            build(Some("c.jsonl")),
            Some(shipping),
        ),
    ];
    // Warm-up, then rounds that alternate the setups, so a machine that slows down or speeds
    // up during the run weighs on all of them alike.
    for setup in &mut setups {
        setup.round(20_000, 2_000);
        setup.noop_times.clear();
        setup.read_times.clear();
    }
    for _ in 0..15 {
        for setup in &mut setups {
            setup.round(2_000, 300);
        }
    }
    let (plain_noop, plain_read) = setups[0].medians();
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    for setup in &setups {
        let (noop, read) = setup.medians();
        println!(
            "settle with {}: no-op {noop:?} ({:.2}x), read {read:?} ({:.2}x)",
            setup.name,
            ratio(noop, plain_noop),
            ratio(read, plain_read),
        );
    }
    let (fmt_noop, fmt_read) = setups[3].medians();
    let (ship_noop, ship_read) = setups[4].medians();
    drop(setups);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let spans = drain.join().expect("drain");
    let records: usize = ["a.jsonl", "b.jsonl", "c.jsonl"]
        .iter()
        .map(|file| {
            std::fs::read_to_string(data.path().join(file))
                .unwrap_or_default()
                .lines()
                .count()
        })
        .sum();
    println!("  spans shipped: {spans}; audit records written: {records}");
    // One ratio a line, so `cargo xtask bench --report` keeps each; the target is stated for
    // what the host chooses (a subscriber that formats off the calling thread).
    for (watcher, noop, read, target) in [
        ("fmt + audit", fmt_noop, fmt_read, ""),
        (
            "shipping layer + audit",
            ship_noop,
            ship_read,
            " (target <= 1.2x)",
        ),
    ] {
        println!(
            "{watcher}, no-op: ratio watched/unwatched {:.2}x{target}",
            ratio(noop, plain_noop)
        );
        println!(
            "{watcher}, read: ratio watched/unwatched {:.2}x{target}",
            ratio(read, plain_read)
        );
    }
}
