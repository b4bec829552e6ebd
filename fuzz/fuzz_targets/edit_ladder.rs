//! The edit tool's match ladder, on a real file in a scratch Location.
//!
//! Input sections: `=== file` (the file's bytes), `=== old`, `=== new` (UTF-8), and `=== all`
//! (present: replaceAll).
//!
//! Properties:
//! - a failed edit leaves the file's bytes as they were;
//! - a byte order mark is kept, never doubled or dropped;
//! - a file whose lines all end in CRLF still does after the edit, when oldString and
//!   newString use only LF (the file's line ending wins);
//! - exact text (no CR anywhere, no BOM): a unique occurrence of oldString is replaced exactly
//!   where it is (`replacen`), several occurrences are refused without replaceAll, and
//!   replaceAll replaces each one (`replace`).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use tackle_fuzz::harness::{self, Place, inside_only};
use tackle_fuzz::sections;
use tackle_permission::Reply;
use tackle_tool_core::Budget;

const BOM: &[u8] = b"\xEF\xBB\xBF";

fn place() -> &'static Place {
    static PLACE: OnceLock<Place> = OnceLock::new();
    PLACE.get_or_init(|| Place::new("tackle-fuzz-edit-", inside_only(&[]), Reply::Once))
}

fuzz_target!(|data: &[u8]| {
    let Some(sections) = sections::split(data) else {
        return;
    };
    let text = |name| sections::get(&sections, name).map(|s| std::str::from_utf8(s.body));
    let (Some(file), Some(Ok(old)), Some(Ok(new))) = (
        sections::get(&sections, "file").map(|s| s.body),
        text("old"),
        text("new"),
    ) else {
        return;
    };
    let replace_all = sections::get(&sections, "all").is_some();
    let place = place();
    place.put("f.txt", file);
    let result = harness::call(
        &place.tool("edit"),
        json!({"path": "f.txt", "oldString": old, "newString": new, "replaceAll": replace_all}),
        Budget::DEFAULT,
    );
    harness::expect_failure_or_ok(&result, "edit");
    let after = std::fs::read(place.root.join("f.txt")).expect("the file is still there");
    if result.is_err() {
        assert_eq!(after, file, "a failed edit changed the file");
        return;
    }
    assert_eq!(
        after.starts_with(BOM),
        file.starts_with(BOM),
        "the byte order mark changed"
    );
    if all_crlf(file) && !old.contains('\r') && !new.contains('\r') {
        assert!(
            all_crlf(&after),
            "a CRLF file got another line ending: {:?}",
            String::from_utf8_lossy(&after)
        );
    }
    let Ok(before) = std::str::from_utf8(file) else {
        panic!("edit changed a file that is not UTF-8");
    };
    if before.contains('\r') || old.contains('\r') || new.contains('\r') || file.starts_with(BOM) {
        return;
    }
    let count = before.matches(old).count();
    let after = String::from_utf8(after).expect("edit wrote UTF-8");
    if replace_all && count > 0 {
        assert_eq!(
            after,
            before.replace(old, new),
            "replaceAll of an exact match"
        );
    } else if count == 1 && overlapping(before, old) == 1 {
        assert_eq!(after, before.replacen(old, new, 1), "a unique exact match");
    } else if count > 1 && !replace_all {
        panic!("an edit of {count} exact occurrences succeeded without replaceAll");
    }
});

/// Every `\n` is preceded by `\r`, and there is at least one.
fn all_crlf(bytes: &[u8]) -> bool {
    let mut any = false;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            if i == 0 || bytes[i - 1] != b'\r' {
                return false;
            }
            any = true;
        }
    }
    any
}

fn overlapping(hay: &str, needle: &str) -> usize {
    (0..hay.len())
        .filter(|&i| hay.is_char_boundary(i) && hay[i..].starts_with(needle))
        .count()
}
