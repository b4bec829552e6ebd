//! Configuration parsing: the `permission` object of tackle.json / opencode.json (JSON with
//! comments), as the binary reads it (`tackle.json` rejects unknown keys, `opencode.json`
//! ignores them).
//!
//! Properties: no panic or stack overflow; a text accepted with unknown keys rejected is
//! accepted with them ignored, with the same rules; on plain JSON the JSONC reader agrees with
//! `serde_json` (same acceptance of the `permission` value, same rules); every rule evaluates.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tackle_permission::{Pattern, UnknownKeys, parse_config, parse_permission};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let strict = parse_config(text, "tackle.json", UnknownKeys::Reject);
    let lenient = parse_config(text, "opencode.json", UnknownKeys::Ignore);
    if let Ok(strict) = &strict {
        let lenient = lenient
            .as_ref()
            .expect("what the strict reading accepts, the lenient one accepts");
        assert_eq!(strict.rules(), lenient.rules());
        for rule in strict.rules() {
            let _ = Pattern::new(&rule.action).matches("bash");
            let _ = Pattern::new(&rule.resource).matches("git status");
        }
        let _ = strict.evaluate("bash", "git status");
    }
    // Plain JSON: the JSONC reader must read it as serde_json does.
    if let Ok(serde_json::Value::Object(top)) = serde_json::from_str::<serde_json::Value>(text) {
        let lenient = lenient.as_ref().map(|r| r.rules().to_vec());
        match top.get("permission") {
            Some(permission) => {
                let direct =
                    parse_permission(permission, "opencode.json").map(|r| r.rules().to_vec());
                assert_eq!(
                    lenient.as_ref().ok(),
                    direct.as_ref().ok(),
                    "the JSONC reader and serde_json disagree on {text:?}"
                );
            }
            None => assert_eq!(lenient.as_ref().ok().map(Vec::len), Some(0)),
        }
    }
});
