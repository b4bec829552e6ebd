//! edit and apply_patch fold the same typographic look-alikes (one shared table), so an input
//! that matches in one tool matches in the other.

use serde_json::json;

use super::support::Fixture;

/// Every character the shared table folds, with the ASCII it stands for. The primes and the
/// two quads (U+2000, U+2001) used to match only in edit; the rest in both.
const FOLDED: &[(char, char)] = &[
    ('\u{2018}', '\''),
    ('\u{2019}', '\''),
    ('\u{201A}', '\''),
    ('\u{201B}', '\''),
    ('\u{2032}', '\''),
    ('\u{201C}', '"'),
    ('\u{201D}', '"'),
    ('\u{201E}', '"'),
    ('\u{201F}', '"'),
    ('\u{2033}', '"'),
    ('\u{2010}', '-'),
    ('\u{2011}', '-'),
    ('\u{2012}', '-'),
    ('\u{2013}', '-'),
    ('\u{2014}', '-'),
    ('\u{2015}', '-'),
    ('\u{2212}', '-'),
    ('\u{00A0}', ' '),
    ('\u{2000}', ' '),
    ('\u{2001}', ' '),
    ('\u{2002}', ' '),
    ('\u{2003}', ' '),
    ('\u{2004}', ' '),
    ('\u{2005}', ' '),
    ('\u{2006}', ' '),
    ('\u{2007}', ' '),
    ('\u{2008}', ' '),
    ('\u{2009}', ' '),
    ('\u{200A}', ' '),
    ('\u{202F}', ' '),
    ('\u{205F}', ' '),
    ('\u{3000}', ' '),
];

/// Replaces the line `model` names in a file holding `file`, with each tool; both must match.
async fn both_match(file: &str, model: &str) {
    let fx = Fixture::new();
    fx.put("e.txt", format!("{file}\n"));
    fx.put("p.txt", format!("{file}\n"));
    let edit = fx
        .call(
            "edit",
            json!({"path": "e.txt", "oldString": model, "newString": "done"}),
        )
        .await;
    assert!(edit.is_ok(), "edit: {file:?} vs {model:?}: {edit:?}");
    assert_eq!(fx.bytes("e.txt"), b"done\n");
    let patch =
        format!("*** Begin Patch\n*** Update File: p.txt\n@@\n-{model}\n+done\n*** End Patch");
    let applied = fx.call("apply_patch", json!({ "patchText": patch })).await;
    assert!(
        applied.is_ok(),
        "apply_patch: {file:?} vs {model:?}: {applied:?}"
    );
    assert_eq!(fx.bytes("p.txt"), b"done\n");
}

#[tokio::test]
async fn the_same_typographic_input_matches_in_edit_and_apply_patch() {
    for &(typographic, ascii) in FOLDED {
        let with = |c: char| format!("let x{c}= f({c}a{c});");
        // The file has the look-alike and the model writes ASCII, and the other way round.
        both_match(&with(typographic), &with(ascii)).await;
        both_match(&with(ascii), &with(typographic)).await;
    }
}

#[tokio::test]
async fn the_ellipsis_is_not_folded_in_either() {
    let fx = Fixture::new();
    fx.put("e.txt", "wait…\n");
    let edit = fx
        .failure(
            "edit",
            json!({"path": "e.txt", "oldString": "wait...", "newString": "x"}),
        )
        .await;
    assert!(edit.starts_with("Could not find oldString"), "{edit}");
    let patch = "*** Begin Patch\n*** Update File: e.txt\n@@\n-wait...\n+x\n*** End Patch";
    let applied = fx
        .failure("apply_patch", json!({ "patchText": patch }))
        .await;
    assert!(
        applied.starts_with("Failed to find expected lines"),
        "{applied}"
    );
}
