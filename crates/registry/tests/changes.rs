//! Catalog change signals: every layer's registrations and removals wake a watcher.

use std::time::Duration;

use tackle_registry::CatalogChanges;

use crate::support::*;

/// True when `changes` reports a change within a generous wait.
async fn woke(changes: &mut CatalogChanges) -> bool {
    tokio::time::timeout(Duration::from_secs(10), changes.changed())
        .await
        .unwrap_or(false)
}

/// True when nothing is reported right away.
async fn quiet(changes: &mut CatalogChanges) -> bool {
    tokio::time::timeout(Duration::from_millis(50), changes.changed())
        .await
        .is_err()
}

#[tokio::test]
async fn every_layer_wakes_a_watcher_when_it_registers_or_removes() {
    let fx = Fixture::new();
    let mut changes = fx.registry.catalog_changes();
    assert!(quiet(&mut changes).await, "nothing changed yet");

    let app = fx.app.register(named(&[("a", echo(""))])).unwrap();
    assert!(woke(&mut changes).await, "application registration");
    let location = fx
        .registry
        .tools()
        .register(named(&[("l", echo(""))]))
        .unwrap();
    assert!(woke(&mut changes).await, "Location registration");
    let session = fx
        .registry
        .session_tools("ses_a")
        .register(named(&[("s", echo(""))]))
        .unwrap();
    assert!(woke(&mut changes).await, "session registration");
    assert!(quiet(&mut changes).await, "each change is reported once");

    drop(session);
    assert!(woke(&mut changes).await, "session guard dropped");
    drop(location);
    assert!(woke(&mut changes).await, "Location guard dropped");
    drop(app);
    assert!(woke(&mut changes).await, "application guard dropped");

    let _kept = fx
        .registry
        .session_tools("ses_b")
        .register(named(&[("s", echo(""))]))
        .unwrap();
    assert!(woke(&mut changes).await);
    assert_eq!(fx.registry.close_session("ses_b"), 1);
    assert!(woke(&mut changes).await, "session closed");
    // Closing a session that registered nothing changes no catalog.
    assert_eq!(fx.registry.close_session("ses_none"), 0);
    assert!(quiet(&mut changes).await);
}

#[tokio::test]
async fn a_watcher_learns_when_its_registry_is_gone_and_keeps_nothing_alive() {
    let fx = Fixture::new();
    let mut changes = fx.registry.catalog_changes();
    let view = fx.registry.tools();
    let Fixture { registry, app, .. } = fx;
    drop(registry);
    // The watcher held no strong reference: the registry is gone, so registering is inert.
    assert!(
        !view
            .register(named(&[("late", echo(""))]))
            .unwrap()
            .is_active()
    );
    let gone = tokio::time::timeout(Duration::from_secs(10), changes.changed()).await;
    assert_eq!(gone, Ok(false), "a gone registry says so at once");
    drop(app);
}

#[tokio::test]
async fn a_change_made_before_the_wait_is_not_lost() {
    let fx = Fixture::new();
    let mut changes = fx.registry.catalog_changes();
    let _reg = fx
        .registry
        .tools()
        .register(named(&[("x", echo(""))]))
        .unwrap();
    // Registered before anyone waited: the wait returns at once.
    assert!(woke(&mut changes).await);
}
