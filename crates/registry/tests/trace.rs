//! Every settle is a `tracing` span carrying the call and its outcome; an observer is told of
//! every settled call.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_registry::{ApplicationTools, SettleObserver, SettleRecord, ToolRegistry};
use tackle_tool_core::{Call, ShowAll};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context as LayerContext, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

use crate::support::*;

type Fields = BTreeMap<String, String>;

/// Collects every closed span's name and fields.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<(String, Fields)>>>);

struct Collect<'a>(&'a mut Fields);

impl Visit for Collect<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: LayerContext<'_, S>) {
        let mut fields = Fields::new();
        attrs.record(&mut Collect(&mut fields));
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: LayerContext<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<Fields>()
        {
            values.record(&mut Collect(fields));
        }
    }
    fn on_close(&self, id: Id, ctx: LayerContext<'_, S>) {
        if let Some(span) = ctx.span(&id) {
            let fields = span
                .extensions()
                .get::<Fields>()
                .cloned()
                .unwrap_or_default();
            self.0
                .lock()
                .unwrap()
                .push((span.name().to_owned(), fields));
        }
    }
}

#[tokio::test]
async fn every_settle_is_a_span_with_its_call_and_outcome() {
    let spans = Spans::default();
    let subscriber = tracing_subscriber::registry().with(spans.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    let fx = Fixture::new();
    let _g = fx
        .registry
        .tools()
        .register(named(&[("echo", echo(""))]))
        .unwrap();
    let snapshot = fx.registry.materialize(&ShowAll);
    let mut context = ctx();
    context.agent = "build".to_owned();
    let call = Call::new("call_1", "Echo", json!({"text": "hello"}));
    snapshot.settle(&call, &context).await.unwrap();
    let call = Call::new("call_2", "missing", json!({}));
    snapshot.settle(&call, &context).await.unwrap();

    let spans = spans.0.lock().unwrap().clone();
    let settles: Vec<&Fields> = spans
        .iter()
        .filter(|(name, _)| name == "settle")
        .map(|(_, fields)| fields)
        .collect();
    assert_eq!(settles.len(), 2, "{spans:?}");
    let echo = settles[0];
    assert_eq!(echo["tool"], "Echo");
    assert_eq!(echo["settled_as"], "echo");
    assert_eq!(echo["call_id"], "call_1");
    assert_eq!(echo["session"], context.session_id);
    assert_eq!(echo["agent"], "build");
    assert_eq!(echo["result"], "text");
    assert_eq!(echo["bytes_in"], r#"{"text":"hello"}"#.len().to_string());
    assert_eq!(echo["bytes_out"], "5");
    assert_eq!(echo["truncated"], "false");
    assert!(echo["duration_ms"].parse::<f64>().unwrap() >= 0.0);
    assert!(!echo.contains_key("reference"));
    let missing = settles[1];
    assert_eq!(missing["result"], "error");
    assert_eq!(
        missing["bytes_out"],
        "Unknown tool: missing".len().to_string()
    );
    assert!(!missing.contains_key("settled_as"));
}

/// What an observer keeps of one call: tool, result type, truncated, references, action.
type Kept = (Option<String>, &'static str, bool, usize, Option<String>);

#[derive(Default)]
struct Seen(Mutex<Vec<Kept>>);

impl SettleObserver for Seen {
    fn settled(&self, record: &SettleRecord<'_>) {
        self.0.lock().unwrap().push((
            record.tool.map(str::to_owned),
            record.result_type(),
            record.truncated(),
            record.references().len(),
            record.action.map(str::to_owned),
        ));
    }
}

#[tokio::test]
async fn an_observer_is_told_of_every_settled_call() {
    let data = tempfile::tempdir().unwrap();
    let config = StoreConfig::in_data_dir(data.path());
    let store = OutputStore::new(config);
    let seen = Arc::new(Seen::default());
    let registry = ToolRegistry::with_observer(&ApplicationTools::new(), store, seen.clone());
    let _g = registry
        .tools()
        .register(named(&[("echo", echo(""))]))
        .unwrap();
    let snapshot = registry.materialize(&ShowAll);
    let long = "line\n".repeat(5000);
    for (id, name, text) in [
        ("a", "echo", "hi"),
        ("b", "echo", long.as_str()),
        ("c", "nope", ""),
    ] {
        let call = Call::new(id, name, json!({"text": text}));
        snapshot.settle(&call, &ctx()).await.unwrap();
    }
    let seen = seen.0.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            (
                Some("echo".to_owned()),
                "text",
                false,
                0,
                Some("echo".to_owned())
            ),
            (
                Some("echo".to_owned()),
                "text",
                true,
                2,
                Some("echo".to_owned())
            ),
            (None, "error", false, 0, None),
        ]
    );
}

/// Refuses every call, counting how many ran and were told.
#[derive(Default)]
struct Refusing {
    told: Mutex<Vec<&'static str>>,
}

impl SettleObserver for Refusing {
    fn settled(&self, record: &SettleRecord<'_>) {
        self.told.lock().unwrap().push(record.result_type());
    }

    fn admit(&self, call: &Call, _: &tackle_tool_core::Context) -> Result<(), String> {
        Err(format!("not now: {}", call.name))
    }
}

#[tokio::test]
async fn a_call_the_observer_refuses_settles_as_its_error_unrun() {
    let data = tempfile::tempdir().unwrap();
    let store = OutputStore::new(StoreConfig::in_data_dir(data.path()));
    let refusing = Arc::new(Refusing::default());
    let registry = ToolRegistry::with_observer(&ApplicationTools::new(), store, refusing.clone());
    let ran = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&ran);
    let tool = tackle_tool_core::Tool::typed(
        "Counts its runs",
        tackle_tool_core::from_fn(move |_: serde_json::Value, _| {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Ok::<_, tackle_tool_core::ToolError>("ran".to_owned())
            }
        }),
    )
    .build();
    let _g = registry
        .tools()
        .register(vec![("count".to_owned(), tool)])
        .unwrap();
    let settled = registry
        .materialize(&ShowAll)
        .settle(&Call::new("a", "count", json!({})), &ctx())
        .await
        .unwrap();
    assert!(settled.is_error());
    assert_eq!(
        settled.result(),
        tackle_tool_core::ResultValue::Error("not now: count".to_owned())
    );
    assert_eq!(ran.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(*refusing.told.lock().unwrap(), ["error"]);
}
