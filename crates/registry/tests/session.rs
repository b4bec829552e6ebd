//! Session layers: above the Location, seen only by their own session.

use tackle_tool_core::ShowAll;

use crate::support::*;

#[tokio::test]
async fn a_session_tool_shadows_location_and_application_tools_for_that_session_only() {
    let fx = Fixture::new();
    let _app = fx.app.register(named(&[("echo", echo("app:"))])).unwrap();
    let _loc = fx
        .registry
        .tools()
        .register(named(&[("echo", echo("loc:"))]))
        .unwrap();
    let session = fx
        .registry
        .session_tools("ses_a")
        .register(named(&[("echo", echo("a:")), ("only_a", echo(""))]))
        .unwrap();

    let a = fx.registry.materialize_session("ses_a", &ShowAll);
    let b = fx.registry.materialize_session("ses_b", &ShowAll);
    let location = fx.registry.materialize(&ShowAll);
    assert_eq!(names(&a), ["echo", "only_a"]);
    assert_eq!(names(&b), ["echo"]);
    assert_eq!(names(&location), ["echo"]);
    assert_eq!(settle_echo(&a, "echo").await, text("a:echo"));
    assert_eq!(settle_echo(&b, "echo").await, text("loc:echo"));
    assert_eq!(
        settle_echo(&b, "only_a").await,
        error("Unknown tool: only_a")
    );

    // A session registration does not make other sessions' or the Location's snapshots stale.
    let _more = fx
        .registry
        .session_tools("ses_a")
        .register(named(&[("echo", echo("a2:"))]))
        .unwrap();
    assert_eq!(settle_echo(&b, "echo").await, text("loc:echo"));
    assert_eq!(settle_echo(&location, "echo").await, text("loc:echo"));
    assert_eq!(
        settle_echo(&a, "echo").await,
        error("Stale tool call: echo")
    );

    drop(session);
    let a = fx.registry.materialize_session("ses_a", &ShowAll);
    assert_eq!(names(&a), ["echo"]);
    assert_eq!(settle_echo(&a, "echo").await, text("a2:echo"));
}

#[test]
fn session_tools_are_filtered_like_any_other() {
    let fx = Fixture::new();
    let _s = fx
        .registry
        .session_tools("s")
        .register(named(&[("mcp_search", echo(""))]))
        .unwrap();
    assert!(
        names(
            &fx.registry
                .materialize_session("s", &Rules(vec![("mcp_search", "*", true)]))
        )
        .is_empty()
    );
}

#[tokio::test]
async fn closing_a_session_removes_its_layer_whoever_holds_the_guards() {
    let fx = Fixture::new();
    let _loc = fx
        .registry
        .tools()
        .register(named(&[("echo", echo("loc:"))]))
        .unwrap();
    let a = fx
        .registry
        .session_tools("ses_a")
        .register(named(&[("echo", echo("a:")), ("only_a", echo(""))]))
        .unwrap();
    let more = fx
        .registry
        .session_tools("ses_a")
        .register(named(&[("echo", echo("a2:"))]))
        .unwrap();
    let _b = fx
        .registry
        .session_tools("ses_b")
        .register(named(&[("only_b", echo("b:"))]))
        .unwrap();
    let before = fx.registry.materialize_session("ses_a", &ShowAll);

    assert_eq!(fx.registry.close_session("ses_a"), 3);
    assert_eq!(fx.registry.close_session("ses_a"), 0);
    // The guards are still held, yet the session sees only the Location's tools.
    assert!(a.is_active() && more.is_active());
    let after = fx.registry.materialize_session("ses_a", &ShowAll);
    assert_eq!(names(&after), ["echo"]);
    assert_eq!(settle_echo(&after, "echo").await, text("loc:echo"));
    assert_eq!(
        settle_echo(&before, "only_a").await,
        error("Stale tool call: only_a")
    );
    assert_eq!(
        settle_echo(&before, "echo").await,
        error("Stale tool call: echo")
    );
    // Other sessions keep theirs; dropping the old guards later changes nothing.
    let b = fx.registry.materialize_session("ses_b", &ShowAll);
    assert_eq!(settle_echo(&b, "only_b").await, text("b:echo"));
    let again = fx
        .registry
        .session_tools("ses_a")
        .register(named(&[("only_a", echo("new:"))]))
        .unwrap();
    drop((a, more));
    let renewed = fx.registry.materialize_session("ses_a", &ShowAll);
    assert_eq!(settle_echo(&renewed, "only_a").await, text("new:echo"));
    drop(again);
}
