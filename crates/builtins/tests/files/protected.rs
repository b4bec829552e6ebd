//! Writes to configuration and repository-control files are asked even when every rule allows
//! (the permission service's protected resources), whichever tool makes them.

use serde_json::{Value, json};
use tackle_permission::{Effect, Reply, Rule};
use tackle_tool_core::ToolError;

use super::support::Fixture;

/// Every rule allows; the user answers every ask with a correction.
fn allowing() -> Fixture {
    Fixture::with_rules(
        Reply::Reject {
            message: Some("not that file".to_owned()),
        },
        vec![Rule::new("*", "*", Effect::Allow)],
    )
}

async fn refused(fx: &Fixture, tool: &str, input: Value) {
    match fx.call(tool, input.clone()).await {
        Err(ToolError::Failure(failure)) => assert!(
            failure.message.contains("not that file"),
            "{tool} {input}: {}",
            failure.message
        ),
        other => panic!("{tool} {input}: expected the user's correction, got {other:?}"),
    }
}

#[tokio::test]
async fn write_and_edit_ask_for_protected_files() {
    let fx = allowing();
    fx.put(".git/config", "[core]\n");
    fx.put("sub/opencode.json", "{}\n");
    refused(
        &fx,
        "write",
        json!({"path": "tackle.json", "content": "{\"permission\":\"allow\"}"}),
    )
    .await;
    refused(
        &fx,
        "write",
        json!({"path": ".tackle/skills/x/SKILL.md", "content": "x"}),
    )
    .await;
    refused(
        &fx,
        "edit",
        json!({"path": ".git/config", "oldString": "[core]", "newString": "[core]\n\thooksPath = h"}),
    )
    .await;
    refused(
        &fx,
        "edit",
        json!({"path": "sub/opencode.json", "oldString": "{}", "newString": "{\"permission\":\"allow\"}"}),
    )
    .await;
    assert!(!fx.path("tackle.json").exists());
    assert!(!fx.path(".tackle").exists());
    assert_eq!(fx.bytes(".git/config"), b"[core]\n");
    assert_eq!(fx.bytes("sub/opencode.json"), b"{}\n");
    let asked: Vec<String> = fx
        .asked()
        .into_iter()
        .map(|(_, r, _)| r.join(","))
        .collect();
    assert_eq!(
        asked,
        [
            "tackle.json",
            ".tackle/skills/x/SKILL.md",
            ".git/config",
            "sub/opencode.json"
        ]
    );
    // An ordinary file is not asked.
    fx.call("write", json!({"path": "notes.md", "content": "x"}))
        .await
        .unwrap();
    assert_eq!(fx.asked().len(), 4);
}

#[tokio::test]
async fn a_symlink_does_not_disguise_a_protected_file() {
    let fx = allowing();
    fx.put(".git/hooks/pre-commit", "#!/bin/sh\n");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(".git/hooks", fx.path("hooks")).unwrap();
        refused(
            &fx,
            "write",
            json!({"path": "hooks/pre-commit", "content": "#!/bin/sh\ncurl x | sh\n"}),
        )
        .await;
        assert_eq!(fx.bytes(".git/hooks/pre-commit"), b"#!/bin/sh\n");
    }
}

#[cfg(feature = "apply-patch")]
#[tokio::test]
async fn apply_patch_asks_for_every_protected_path_including_move_targets() {
    let fx = allowing();
    fx.put("a.txt", "one\n");
    let patches = [
        "*** Begin Patch\n*** Add File: .opencode/agent.md\n+x\n*** End Patch",
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: tackle.jsonc\n@@\n-one\n+{}\n*** End Patch",
        "*** Begin Patch\n*** Add File: b.txt\n+b\n*** Add File: .git/info/attributes\n+x\n*** End Patch",
    ];
    for patch in patches {
        refused(&fx, "apply_patch", json!({"patchText": patch})).await;
    }
    assert!(!fx.path(".opencode").exists());
    assert!(!fx.path("tackle.jsonc").exists());
    assert!(!fx.path("b.txt").exists());
    assert_eq!(fx.bytes("a.txt"), b"one\n");
    assert_eq!(fx.asked().len(), 3);
}
