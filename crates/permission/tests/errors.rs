//! What the model, the host and the user read when a check fails.

use tackle_permission::{Effect, PermissionError, Rule};
use tackle_tool_core::{Halt, ToolError};

fn blocked(resources: &[&str]) -> PermissionError {
    PermissionError::Blocked {
        action: "bash".into(),
        resources: resources.iter().map(ToString::to_string).collect(),
        rules: vec![
            Rule::new("*", "*", Effect::Ask),
            Rule::new("bash", "rm *", Effect::Deny),
            Rule::new("bash", "rm -rf *", Effect::Deny),
        ],
    }
}

#[test]
fn blocked_is_a_failure_the_model_reads() {
    let ToolError::Failure(failure) = ToolError::from(blocked(&["rm -rf /"])) else {
        panic!("not a failure")
    };
    insta::assert_snapshot!(failure.message, @r#"Permission denied: bash "rm -rf /" is blocked by the configured rule {action: "bash", resource: "rm -rf *", effect: "deny"}. Do not retry it; use another approach or ask the user to change the rule."#);
    insta::assert_json_snapshot!(failure.metadata, @r#"
    {
      "permission": {
        "action": "bash",
        "resources": [
          "rm -rf /"
        ],
        "rule": {
          "action": "bash",
          "resource": "rm -rf *",
          "effect": "deny"
        }
      }
    }
    "#);
    insta::assert_snapshot!(blocked(&["rm a", "rm b"]).to_string(), @r#"Permission denied: bash on "rm a", "rm b" is blocked by the configured rule {action: "bash", resource: "rm *", effect: "deny"}. Do not retry it; use another approach or ask the user to change the rule."#);
    let unexplained = PermissionError::Blocked {
        action: "edit".into(),
        resources: vec!["x".into()],
        rules: vec![],
    };
    insta::assert_snapshot!(unexplained.to_string(), @r#"Permission denied: edit "x" is blocked by the permission configuration. Do not retry it; use another approach or ask the user to change the rule."#);
}

#[test]
fn corrected_is_a_failure_with_the_feedback() {
    let err = ToolError::from(PermissionError::Corrected {
        feedback: "use ls".into(),
    });
    let ToolError::Failure(failure) = err else {
        panic!("not a failure")
    };
    insta::assert_snapshot!(failure.message, @"The user rejected permission to use this specific tool call with the following feedback: use ls");
}

#[test]
fn declined_halts_and_the_rest_are_defects() {
    assert!(matches!(
        ToolError::from(PermissionError::Declined),
        ToolError::Halt(Halt::Declined)
    ));
    for err in [
        PermissionError::NotFound {
            request_id: "per_1".into(),
        },
        PermissionError::InvalidRequest {
            reason: "the action is empty".into(),
        },
        PermissionError::Saved {
            path: "/x".into(),
            message: "disk full".into(),
        },
    ] {
        let text = err.to_string();
        match ToolError::from(err) {
            ToolError::Defect(defect) => {
                assert_eq!(defect.message(), "permission check failed");
                let source = std::error::Error::source(&defect).unwrap().to_string();
                assert_eq!(source, text);
            }
            other => panic!("{other:?}"),
        }
    }
}
