//! The providers' own SDKs (Python: `openai`, `anthropic`, `google-genai`, `mcp`) accept every
//! definition and result shape we export. The venv is made by `.ci/sdk-venv.sh`, which `.ci/run`
//! calls; without it (a developer machine that never ran it) the test says so and passes,
//! unless `TACKLE_SDK_REQUIRED` is set, as `.ci/run` sets it.

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;
use tackle_formats::{Format, export};

use crate::support::*;

/// The venv's Python: `TACKLE_SDK_VENV`, else the repository's `.ci/sdk-venv`.
fn python() -> Option<PathBuf> {
    let venv = std::env::var_os("TACKLE_SDK_VENV").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.ci/sdk-venv"),
        PathBuf::from,
    );
    let python = venv.join("bin/python");
    python.exists().then_some(python)
}

#[tokio::test]
async fn the_providers_sdks_accept_every_definition_and_result() {
    let Some(python) = python() else {
        assert!(
            std::env::var_os("TACKLE_SDK_REQUIRED").is_none(),
            "no SDK venv: .ci/sdk-venv.sh did not make it"
        );
        eprintln!("skipped: no SDK venv (run .ci/sdk-venv.sh)");
        return;
    };
    let fx = Fixture::new();
    let snapshot = fx.snapshot();
    let mut definitions = serde_json::Map::new();
    for format in Format::ALL {
        definitions.insert(format.as_str().into(), export(&snapshot, format).tools);
    }
    let exported = json!({
        "definitions": definitions,
        "results": crate::results::shapes(&fx).await,
    });
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("exported.json");
    std::fs::write(&input, serde_json::to_vec(&exported).unwrap()).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk_check.py");
    let output = Command::new(python)
        .arg(script)
        .arg(&input)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("no problem"), "{stdout}");
}
