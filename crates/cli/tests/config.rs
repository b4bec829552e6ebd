//! Every configuration key takes effect through the binary. The user's file is
//! `<home>/.config/tackle/tackle.json` (the child's HOME is the test's data directory).

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;

use predicates::str::contains;

use crate::Workspace;

impl Workspace {
    /// Writes the user's configuration file.
    fn user_config(&self, text: &str) -> PathBuf {
        let path = self.data.path().join(".config/tackle/tackle.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// `tackle call <tool> <input> --yes`: its stdout, the exit code must be `code`.
    fn call_yes(&self, tool: &str, input: &str, code: i32) -> String {
        let out = self
            .tackle(&["call", tool, input, "--yes"])
            .assert()
            .code(code);
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    }

    fn stdout(&self, args: &[&str]) -> String {
        let out = self.tackle(args).assert().code(0);
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    }
}

#[test]
fn output_limits_bound_results() {
    let ws = Workspace::new();
    let input = r#"{"command": "seq 1 100"}"#;
    assert!(!ws.call_yes("bash", input, 0).contains("tool-output://"));
    ws.user_config(r#"{"output": {"max_lines": 10}}"#);
    assert!(ws.call_yes("bash", input, 0).contains("tool-output://"));
    ws.user_config(r#"{"output": {"max_bytes": 150}}"#);
    assert!(ws.call_yes("bash", input, 0).contains("tool-output://"));
    // The same from the environment and from a flag.
    ws.user_config("{}");
    let out = ws
        .tackle(&["call", "bash", input, "--yes"])
        .env("TACKLE_OUTPUT_MAX_LINES", "10")
        .assert()
        .code(0);
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("tool-output://"));
    let out = ws
        .tackle(&[
            "call",
            "bash",
            input,
            "--yes",
            "--set",
            "output.max_lines=10",
        ])
        .assert()
        .code(0);
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("tool-output://"));
}

#[test]
fn bash_environment_and_shell() {
    let ws = Workspace::new();
    ws.user_config(r#"{"bash": {"env": {"GREETING": "hi there"}, "shell": "/bin/sh"}}"#);
    let out = ws
        .tackle(&[
            "call",
            "bash",
            r#"{"command": "echo \"$GREETING\""}"#,
            "--yes",
            "--json",
        ])
        .assert()
        .code(0);
    let settlement: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let text = settlement.to_string();
    assert!(text.contains("hi there"), "{text}");
    assert!(text.contains("/bin/sh"), "{text}");
}

#[test]
fn bash_env_allow_lets_a_credential_through() {
    let ws = Workspace::new();
    let secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let input = r#"{"command": "echo \"[$GITHUB_TOKEN]\""}"#;
    let run = || {
        let out = ws
            .tackle(&["call", "bash", input, "--yes"])
            .env("GITHUB_TOKEN", secret)
            .assert()
            .code(0);
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    assert!(run().contains("[]"));
    ws.user_config(r#"{"bash": {"env_allow": ["GITHUB_TOKEN"]}}"#);
    assert!(run().contains(&format!("[{secret}]")));
}

#[test]
fn bash_timeouts() {
    let ws = Workspace::new();
    ws.user_config(r#"{"bash": {"default_timeout_ms": 300}}"#);
    let out = ws.call_yes("bash", r#"{"command": "sleep 20"}"#, 0);
    assert!(out.contains("Command exceeded timeout of 300 ms"), "{out}");
    ws.user_config(r#"{"bash": {"max_timeout_ms": 400}}"#);
    let out = ws.call_yes("bash", r#"{"command": "sleep 20", "timeout": 600000}"#, 0);
    assert!(out.contains("Command exceeded timeout of 400 ms"), "{out}");
}

/// A server on 127.0.0.1 answering every request with `body` after `delay`.
fn serve(body: &'static str, delay: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut buffer = [0; 4096];
                let _ = stream.read(&mut buffer);
                std::thread::sleep(delay);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    format!("http://127.0.0.1:{port}/")
}

#[test]
fn webfetch_allow_timeout_and_cap() {
    let ws = Workspace::new();
    let url = serve("hello from the dev server", Duration::ZERO);
    let input = format!(r#"{{"url": "{url}"}}"#);
    ws.user_config(r#"{"webfetch": {"allow": ["127.0.0.1"], "max_bytes": 10}}"#);
    let out = ws.call_yes("webfetch", &input, 0);
    assert!(out.starts_with("hello from"), "{out}");
    assert!(out.contains("truncated to 10 bytes"), "{out}");
    let slow = serve("late", Duration::from_secs(10));
    ws.user_config(r#"{"webfetch": {"allow": ["127.0.0.1"], "timeout_seconds": 1}}"#);
    let out = ws.call_yes("webfetch", &format!(r#"{{"url": "{slow}"}}"#), 1);
    assert!(out.contains("timed out after 1 seconds"), "{out}");
}

#[test]
fn a_local_dev_server_is_a_permission_question() {
    let ws = Workspace::new();
    let url = serve("hello from the dev server", Duration::ZERO);
    let input = format!(r#"{{"url": "{url}"}}"#);
    // No terminal to ask: declined, and the message says what would allow it.
    ws.tackle(&["call", "webfetch", &input])
        .assert()
        .code(2)
        .stderr(contains("needs permission"));
    // Answered "once".
    let out = ws.call_yes("webfetch", &input, 0);
    assert!(out.starts_with("hello from the dev server"), "{out}");
    // Metadata addresses are refused whatever the answer or the allow-list.
    ws.user_config(r#"{"webfetch": {"allow": ["169.254.0.0/16"]}}"#);
    let out = ws.call_yes("webfetch", r#"{"url": "http://169.254.169.254/"}"#, 1);
    assert!(out.ends_with("which webfetch never reaches\n"), "{out}");
}

#[test]
fn websearch_is_offered_with_a_key() {
    let ws = Workspace::new();
    assert!(!ws.stdout(&["tools"]).contains("websearch"));
    let out = ws
        .tackle(&["tools"])
        .env("EXA_API_KEY", "k")
        .assert()
        .code(0);
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("websearch"));
    ws.user_config(r#"{"websearch": {"provider": "parallel", "api_key_env": "MY_SEARCH_KEY"}}"#);
    let out = ws
        .tackle(&["tools"])
        .env("MY_SEARCH_KEY", "k")
        .assert()
        .code(0);
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("websearch"));
}

#[test]
fn skill_paths_are_searched() {
    let ws = Workspace::new();
    let config = ws.user_config(r#"{"skills": {"paths": ["my-skills"]}}"#);
    let skill = config.parent().unwrap().join("my-skills/greet/SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    std::fs::write(
        &skill,
        "---\nname: greet\ndescription: Says hello\n---\nSay hello.\n",
    )
    .unwrap();
    let out = ws.call_yes("skill", r#"{"name": "greet"}"#, 0);
    assert!(out.contains("Say hello."), "{out}");
}

#[test]
fn search_budget_limits_a_search() {
    let ws = Workspace::new();
    for dir in 0..40 {
        let dir = ws.dir.path().join(format!("d{dir}"));
        std::fs::create_dir_all(&dir).unwrap();
        for file in 0..50 {
            std::fs::write(dir.join(format!("f{file}.txt")), "needle\n".repeat(50)).unwrap();
        }
    }
    ws.user_config(r#"{"search": {"budget_ms": 1}}"#);
    let out = ws.call_yes("grep", r#"{"pattern": "needle", "limit": 100000}"#, 0);
    assert!(out.contains("Search incomplete"), "{out}");
}

/// A `width` × `height` PNG of a gradient.
fn png(width: u32, height: u32) -> Vec<u8> {
    let pixels = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x + y) % 256) as u8])
    });
    let mut bytes = std::io::Cursor::new(Vec::new());
    pixels
        .write_to(&mut bytes, image::ImageFormat::Png)
        .unwrap();
    bytes.into_inner()
}

#[test]
fn read_image_bound_and_image_input() {
    let ws = Workspace::new();
    std::fs::write(ws.dir.path().join("shot.png"), png(300, 200)).unwrap();
    let input = r#"{"path": "shot.png"}"#;
    let out = ws.call_yes("read", input, 0);
    assert!(out.starts_with("Image read successfully\n"), "{out}");
    // A small bound: scaled down, keeping the aspect ratio, both sizes said.
    ws.user_config(r#"{"read": {"image_max_width": 150}}"#);
    let out = ws.call_yes("read", input, 0);
    assert!(out.contains("Original: 300x200 px"), "{out}");
    assert!(out.contains("Sent: 150x100 px"), "{out}");
    assert!(out.contains("[file shot.png (image/"), "{out}");
    // No image input: a text note, no image.
    ws.user_config(r#"{"read": {"image_input": false}}"#);
    let out = ws
        .tackle(&["call", "read", input, "--yes", "--json"])
        .assert()
        .code(0);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("Image not shown: images cannot be sent to this model."),
        "{text}"
    );
    assert!(text.contains("300x200 px"), "{text}");
    assert!(!text.contains("data:image/"), "{text}");
    // The same from the environment.
    ws.user_config("{}");
    let out = ws
        .tackle(&["call", "read", input, "--yes"])
        .env("TACKLE_READ_IMAGE_INPUT", "false")
        .assert()
        .code(0);
    assert!(String::from_utf8_lossy(&out.get_output().stdout).starts_with("Image not shown"));
    // A bad value stops the call, naming the key.
    ws.user_config(r#"{"read": {"image_max_height": 0}}"#);
    ws.tackle(&["call", "read", input, "--yes"])
        .assert()
        .code(2)
        .stderr(contains(
            "tackle.json: read.image_max_height: must be at least 1, not 0",
        ));
}

#[test]
fn config_shows_every_value_and_its_origin() {
    let ws = Workspace::new();
    ws.user_config(
        r#"{"output": {"retention_days": 3, "max_file_bytes": 1048576, "quota_bytes": 10485760},
            "bash": {"shell": "/bin/sh"}, "mcp": {"docs": {"type": "remote"}},
            "read": {"image_input": false},
            "agent": {"plan": {"permission": {"edit": "deny"}}}}"#,
    );
    ws.write(
        "tackle.jsonc",
        "// project\n{\"search\": {\"budget_ms\": 5000}}\n",
    );
    let out = ws
        .tackle(&["config", "--set", "output.max_lines=500"])
        .env("TACKLE_WEBFETCH_TIMEOUT_SECONDS", "9")
        .assert()
        .code(0);
    let text = String::from_utf8(out.get_output().stdout.clone())
        .unwrap()
        .replace(&ws.data.path().display().to_string(), "[home]")
        .replace(
            &std::fs::canonicalize(ws.dir.path())
                .unwrap()
                .display()
                .to_string(),
            "[dir]",
        );
    insta::assert_snapshot!(text);
}

#[test]
fn a_bad_configuration_stops_before_anything_is_written() {
    let ws = Workspace::new();
    ws.user_config("{\n  \"bash\": {\"default_timeout_ms\": \"soon\"}\n}\n");
    let out = ws
        .tackle(&[
            "call",
            "write",
            r#"{"path": "new.txt", "content": "x"}"#,
            "--yes",
        ])
        .assert()
        .code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone())
        .unwrap()
        .replace(&ws.data.path().display().to_string(), "[home]");
    insta::assert_snapshot!(stderr, @r#"tackle: bad configuration: [home]/.config/tackle/tackle.json:2:39: bash.default_timeout_ms: invalid type: string "soon", expected a whole number"#);
    assert!(!ws.dir.path().join("new.txt").exists());
    ws.tackle(&["config"])
        .assert()
        .code(2)
        .stderr(contains("bash.default_timeout_ms"));
}

#[test]
fn config_schema_is_the_documented_one() {
    let out = crate::tackle().args(["config", "schema"]).assert().code(0);
    let printed = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let documented = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.schema.json"),
    )
    .unwrap();
    assert_eq!(
        printed, documented,
        "run: tackle config schema > docs/config.schema.json"
    );
}
