//! The host: configured services, sessions, agents, a one-shot host.

use std::sync::Arc;

use serde_json::json;
use tackle_host::Host;
use tackle_permission::{AnswerAll, Reply};
use tackle_tool_core::{Call, Context, Tool, ToolError, from_fn};

use crate::Fixture;

fn host(fx: &Fixture) -> tackle_host::HostBuilder {
    Host::builder(fx.location())
        .data_dir(fx.data.path())
        .env(fx.env())
}

#[tokio::test]
async fn a_session_settles_with_its_agent_and_deleting_it_drops_its_tools() {
    let fx = Fixture::new();
    let host = host(&fx).build().unwrap();
    let session = host.create_session().with_agent("plan");
    let whoami = Tool::typed(
        "Says who calls",
        from_fn(|_: serde_json::Value, ctx: Context| async move {
            Ok::<_, ToolError>(format!("{} in {}", ctx.agent, ctx.session_id))
        }),
    )
    .build();
    session
        .register(vec![("whoami".to_owned(), whoami)])
        .unwrap();
    let call = Call::new("c1", "whoami", json!({}));
    let settled = session.settle(&call).await.unwrap();
    assert_eq!(
        settled.result(),
        tackle_tool_core::ResultValue::Text(format!("plan in {}", session.id()))
    );
    // Another session does not see it.
    let other = host.create_session();
    assert!(!other.materialize().contains("whoami"));
    host.delete_session(session.id()).unwrap();
    assert!(!host.session(session.id()).materialize().contains("whoami"));
    assert!(host.session(session.id()).materialize().contains("read"));
}

#[tokio::test]
async fn configured_values_reach_the_services() {
    let mut fx = Fixture::new();
    fx.write_user(
        r#"{"output": {"max_lines": 3, "retention_days": 2, "max_file_bytes": 8192, "quota_bytes": 65536},
            "websearch": {"provider": "exa", "api_key_env": "MY_EXA"}}"#,
    );

    fx.var("MY_EXA", "key-from-elsewhere");
    fx.write("app/notes.txt", "1\n2\n3\n4\n5\n6\n7\n8\n");
    let host = host(&fx)
        .asker(Arc::new(AnswerAll(Reply::Once)))
        .build()
        .unwrap();
    let store = host.store().config();
    assert_eq!(store.max_lines, 3);
    assert_eq!(
        store.retention,
        std::time::Duration::from_secs(2 * 24 * 60 * 60)
    );
    assert_eq!((store.spill_cap, store.quota), (8192, 65536));
    assert!(host.materialize().contains("websearch"));
    let call = Call::new("c1", "bash", json!({"command": "seq 1 20"}));
    let settled = host.session("s").settle(&call).await.unwrap();
    assert!(settled.truncated(), "{:?}", settled.result());
}

#[test]
fn an_exa_key_in_the_environment_offers_websearch() {
    let mut fx = Fixture::new();
    assert!(
        !host(&fx)
            .build()
            .unwrap()
            .materialize()
            .contains("websearch")
    );
    fx.var("EXA_API_KEY", "k");
    assert!(
        host(&fx)
            .build()
            .unwrap()
            .materialize()
            .contains("websearch")
    );
}

#[test]
fn a_one_shot_host_builds_only_its_tool() {
    let fx = Fixture::new();
    let host = host(&fx).only("read").build().unwrap();
    let names: Vec<String> = host
        .materialize()
        .definitions()
        .iter()
        .map(|d| d.name.clone())
        .collect();
    assert_eq!(names, ["read"]);
    // A name that is not a builtin's builds them all, so the registry can match its case.
    let host = host_all(&fx, "Read");
    assert!(host.materialize().contains("write"));
}

fn host_all(fx: &Fixture, name: &str) -> Host {
    host(fx).only(name).build().unwrap()
}

#[test]
fn building_a_host_writes_nothing() {
    let fx = Fixture::new();
    let data = fx.data.path().join("fresh");
    Host::builder(fx.location())
        .data_dir(&data)
        .env(fx.env())
        .build()
        .unwrap();
    assert!(!data.exists());
}

#[tokio::test]
async fn commands_start_from_the_host_s_environment_and_its_credentials_are_withheld() {
    // Without a `bash` section: the environment given to the builder, not the process's, is
    // what commands start from and what is scrubbed and redacted.
    let mut fx = Fixture::new();
    fx.var("TACKLE_TEST_GIVEN", "given-to-the-host");
    fx.var("MY_SERVICE_TOKEN", "sk-given1234567890abcdef");
    let host = host(&fx)
        .asker(Arc::new(AnswerAll(Reply::Once)))
        .build()
        .unwrap();
    let command =
        "echo \"$TACKLE_TEST_GIVEN ${MY_SERVICE_TOKEN:-withheld}\"; echo sk-given1234567890abcdef";
    let call = Call::new("c1", "bash", json!({ "command": command }));
    let settled = host.session("s").settle(&call).await.unwrap();
    let tackle_tool_core::ResultValue::Text(text) = settled.result() else {
        panic!("{:?}", settled.result());
    };
    assert!(
        text.starts_with("given-to-the-host withheld\n[REDACTED]\n"),
        "{text}"
    );
}
