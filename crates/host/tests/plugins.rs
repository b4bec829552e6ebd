//! Plugins: boot order and scopes, failures reported by name, no shadowing, tools gone with
//! their host.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use tackle_host::{BootError, Host, Plugin, PluginContext, Plugins, Scope};
use tackle_registry::ApplicationTools;
use tackle_tool_core::{Call, Context, ResultValue, Tool, ToolError, from_fn};

use crate::Fixture;

/// A tool answering `text`.
fn says(text: &'static str) -> Tool {
    Tool::typed(
        "Says something",
        from_fn(move |_: serde_json::Value, _ctx: Context| async move {
            Ok::<_, ToolError>(text.to_owned())
        }),
    )
    .build()
}

/// What a test plugin does when booted.
#[derive(Clone, Copy)]
enum Then {
    Succeed,
    Fail,
    Panic,
}

/// Registers `<name>_app` for the process and `<name>_here` per Location (or `tools` when
/// given), then does `then`; counts its boots and logs them in `log`.
struct TestPlugin {
    name: &'static str,
    then: Then,
    tools: Option<Vec<&'static str>>,
    log: Arc<Mutex<Vec<String>>>,
    boots: AtomicUsize,
}

impl TestPlugin {
    fn new(name: &'static str, then: Then, log: &Arc<Mutex<Vec<String>>>) -> Arc<Self> {
        Arc::new(Self {
            name,
            then,
            tools: None,
            log: Arc::clone(log),
            boots: AtomicUsize::new(0),
        })
    }
}

impl Plugin for TestPlugin {
    fn name(&self) -> &str {
        self.name
    }

    fn boot(&self, ctx: &PluginContext<'_>) -> Result<(), BootError> {
        self.boots.fetch_add(1, Ordering::SeqCst);
        let scope = ctx.scope();
        self.log
            .lock()
            .unwrap()
            .push(format!("{} {scope:?}", self.name));
        let names = match &self.tools {
            Some(names) => names.iter().map(|name| (*name).to_owned()).collect(),
            None => vec![match scope {
                Scope::Application => format!("{}_app", self.name),
                Scope::Location => format!("{}_here", self.name),
            }],
        };
        assert_eq!(ctx.services().is_some(), scope == Scope::Location);
        ctx.register(names.into_iter().map(|n| (n, says("hi"))).collect())?;
        match self.then {
            Then::Succeed => Ok(()),
            Then::Fail => Err("no licence key".into()),
            Then::Panic => panic!("plugin {} fell over", self.name),
        }
    }
}

fn host(fx: &Fixture) -> tackle_host::HostBuilder {
    Host::builder(fx.location())
        .data_dir(fx.data.path())
        .env(fx.env())
}

#[test]
fn plugins_boot_in_order_once_per_process_and_once_per_location() {
    let (one, two) = (Fixture::new(), Fixture::new());
    let log = Arc::new(Mutex::new(Vec::new()));
    let (a, b) = (
        TestPlugin::new("alpha", Then::Succeed, &log),
        TestPlugin::new("beta", Then::Succeed, &log),
    );
    let app = ApplicationTools::new();
    let plugins = Plugins::boot(&app, [a.clone() as Arc<dyn Plugin>, b.clone()]);
    let first = host(&one).plugins(&plugins).build().unwrap();
    let second = host(&two).plugins(&plugins).build().unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "alpha Application",
            "beta Application",
            "alpha Location",
            "beta Location",
            "alpha Location",
            "beta Location"
        ]
    );
    assert_eq!(a.boots.load(Ordering::SeqCst), 3);
    for host in [&first, &second] {
        let catalog = host.materialize();
        for name in ["alpha_app", "beta_app", "alpha_here", "beta_here", "read"] {
            assert!(catalog.contains(name), "{name}");
        }
        let statuses: Vec<_> = host
            .plugins()
            .iter()
            .map(|s| (s.name.as_str(), s.scope, s.tools.clone(), s.booted()))
            .collect();
        assert_eq!(
            statuses,
            [
                (
                    "alpha",
                    Scope::Application,
                    vec!["alpha_app".to_owned()],
                    true
                ),
                (
                    "beta",
                    Scope::Application,
                    vec!["beta_app".to_owned()],
                    true
                ),
                (
                    "alpha",
                    Scope::Location,
                    vec!["alpha_here".to_owned()],
                    true
                ),
                ("beta", Scope::Location, vec!["beta_here".to_owned()], true),
            ]
        );
    }
    // The application tools stay while the plugin set lives, whichever host goes.
    drop(first);
    assert!(second.materialize().contains("alpha_app"));
}

#[test]
fn a_failing_or_panicking_plugin_is_reported_and_the_others_stay_booted() {
    let fx = Fixture::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    let host = host(&fx)
        .plugin(TestPlugin::new("broken", Then::Fail, &log))
        .plugin(TestPlugin::new("crashy", Then::Panic, &log))
        .plugin(TestPlugin::new("fine", Then::Succeed, &log))
        .build()
        .unwrap();
    let catalog = host.materialize();
    for gone in ["broken_app", "broken_here", "crashy_app", "crashy_here"] {
        assert!(
            !catalog.contains(gone),
            "{gone} was registered before its boot failed"
        );
    }
    assert!(catalog.contains("fine_app") && catalog.contains("fine_here"));
    let report: Vec<String> = host
        .plugins()
        .iter()
        .map(|s| format!("{} {:?}: {:?} {:?}", s.name, s.scope, s.tools, s.error))
        .collect();
    assert_eq!(
        report,
        [
            "broken Application: [] Some(\"no licence key\")",
            "crashy Application: [] Some(\"panicked: plugin crashy fell over\")",
            "fine Application: [\"fine_app\"] None",
            "broken Location: [] Some(\"no licence key\")",
            "crashy Location: [] Some(\"panicked: plugin crashy fell over\")",
            "fine Location: [\"fine_here\"] None",
        ]
    );
}

#[test]
fn a_plugin_cannot_shadow_a_builtin_or_an_earlier_tool() {
    let fx = Fixture::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut first = TestPlugin::new("first", Then::Succeed, &log);
    Arc::get_mut(&mut first).unwrap().tools = Some(vec!["lookup"]);
    let mut again = TestPlugin::new("again", Then::Succeed, &log);
    Arc::get_mut(&mut again).unwrap().tools = Some(vec!["lookup"]);
    let mut bash = TestPlugin::new("bash_like", Then::Succeed, &log);
    Arc::get_mut(&mut bash).unwrap().tools = Some(vec!["bash"]);
    // A one-shot host builds read alone, and bash is still a builtin's name.
    let host = host(&fx)
        .only("read")
        .plugin(first)
        .plugin(again)
        .plugin(bash)
        .build()
        .unwrap();
    let errors: Vec<_> = host
        .plugins()
        .iter()
        .map(|s| {
            format!(
                "{} {:?}: {}",
                s.name,
                s.scope,
                s.error.as_deref().unwrap_or("ok")
            )
        })
        .collect();
    assert_eq!(
        errors,
        [
            "first Application: ok",
            "again Application: cannot register lookup: a builtin or an earlier registration already has this name",
            "bash_like Application: cannot register bash: a builtin or an earlier registration already has this name",
            "first Location: cannot register lookup: a builtin or an earlier registration already has this name",
            "again Location: cannot register lookup: a builtin or an earlier registration already has this name",
            "bash_like Location: cannot register bash: a builtin or an earlier registration already has this name",
        ]
    );
    assert!(!host.materialize().contains("bash"));
}

#[tokio::test]
async fn plugin_tools_go_with_their_host_and_older_calls_are_stale() {
    let fx = Fixture::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    let host = host(&fx)
        .plugin(TestPlugin::new("gone", Then::Succeed, &log))
        .build()
        .unwrap();
    let catalog = host.materialize();
    let ctx = Context::new("ses_1");
    let call = Call::new("c1", "gone_here", json!({}));
    let settled = catalog.settle(&call, &ctx).await.unwrap();
    assert_eq!(settled.result(), ResultValue::Text("hi".to_owned()));
    drop(host);
    for name in ["gone_here", "gone_app"] {
        let call = Call::new("c2", name, json!({}));
        let settled = catalog.settle(&call, &ctx).await.unwrap();
        assert_eq!(
            settled.result(),
            ResultValue::Error(format!("Stale tool call: {name}"))
        );
    }
}
