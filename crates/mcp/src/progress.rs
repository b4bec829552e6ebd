//! `notifications/progress` for a call that carries a progress token: a running command's
//! latest output line (the amount of output so far as the progress), or a tool's steps.
//!
//! The tool reports on its own thread through a [`ProgressSink`], which only updates a
//! `watch` value (never blocks, keeps no backlog however much is written); a task on the
//! async side sends what is new at most every [`INTERVAL`], and once more when the call ends,
//! before its result, so the last line is never lost.

use std::borrow::Cow;
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tackle_output_store::OutputStore;
use tackle_tool_core::{OutputStream, Progress, ProgressSink};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};

/// The shortest time between two progress notifications of one call.
pub(crate) const INTERVAL: Duration = Duration::from_millis(200);
/// Bytes of an unfinished line kept; the rest of a longer line is dropped.
const MAX_LINE_BYTES: usize = 1024;
/// Characters of a line sent as a message.
const MAX_MESSAGE_CHARS: usize = 200;

/// What a call reported so far.
#[derive(Debug, Default)]
struct Reported {
    /// Output bytes so far, every stream.
    bytes: u64,
    /// The latest complete, non-blank output line.
    line: Option<String>,
    /// Each stream's unfinished line (capped).
    partial: [Vec<u8>; 2],
    /// The latest step: done, total, message.
    step: Option<(u64, Option<u64>, String)>,
}

impl Reported {
    fn absorb(&mut self, progress: Progress<'_>) {
        match progress {
            Progress::Output { stream, bytes } => self.output(stream, bytes),
            Progress::Step {
                done,
                total,
                message,
            } => self.step = Some((done, total, message.to_owned())),
            _ => {}
        }
    }

    fn output(&mut self, stream: OutputStream, bytes: &[u8]) {
        self.bytes = self.bytes.saturating_add(bytes.len() as u64);
        let partial = &mut self.partial[usize::from(stream == OutputStream::Stderr)];
        // Only the chunk's last non-blank line is rendered: a chunk of many lines costs one
        // scan, not one string per line.
        let mut last: Option<Cow<'_, [u8]>> = None;
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let segment = &rest[..end];
            if partial.is_empty() {
                if !is_blank(segment) {
                    last = Some(Cow::Borrowed(segment));
                }
            } else {
                extend_capped(partial, segment);
                let line = std::mem::take(partial);
                if !is_blank(&line) {
                    last = Some(Cow::Owned(line));
                }
            }
            rest = &rest[end + 1..];
        }
        extend_capped(partial, rest);
        if let Some(line) = last {
            self.line = Some(message(&line));
        }
    }

    /// The notification to send now, if anything moved on since `sent`; `finished`: the call
    /// ended, so an unfinished last line counts as a line.
    fn next(&self, sent: &mut f64, finished: bool) -> Option<(f64, Option<f64>, Option<String>)> {
        if let Some((done, total, text)) = &self.step {
            let progress = *done as f64;
            return (progress > *sent).then(|| {
                *sent = progress;
                (progress, total.map(|t| t as f64), Some(text.clone()))
            });
        }
        let progress = self.bytes as f64;
        if progress <= *sent {
            return None;
        }
        *sent = progress;
        let tail = finished
            .then(|| self.partial.iter().find(|line| !is_blank(line)))
            .flatten()
            .map(|line| message(line));
        Some((progress, None, tail.or_else(|| self.line.clone())))
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

fn extend_capped(line: &mut Vec<u8>, bytes: &[u8]) {
    let room = MAX_LINE_BYTES.saturating_sub(line.len());
    line.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

/// A line as a person would see it on a terminal: what follows its last carriage return
/// (progress bars redraw that way), without escape sequences or control characters. A line cut
/// at [`MAX_LINE_BYTES`] is shown from its start, so the cut (which may split a secret the
/// store would redact) stays past what [`shown`] keeps.
fn message(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let shown = if line.len() >= MAX_LINE_BYTES {
        &text[..]
    } else {
        text.rsplit('\r')
            .find(|part| !part.trim().is_empty())
            .unwrap_or_default()
    };
    let mut out = String::new();
    let mut chars = shown.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI (`ESC [ ... final`): skip to its final byte; other escapes: the next char.
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
        } else if c == '\r' {
            out.push(' ');
        } else if !c.is_control() || c == '\t' {
            out.push(c);
        }
    }
    out.trim().to_owned()
}

/// `message` as sent: the store's secrets redacted in the whole line first, then cut to
/// [`MAX_MESSAGE_CHARS`].
fn shown(store: &OutputStore, mut message: String) -> String {
    store.redact_text(&mut message);
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &message[..cut]),
        None => message,
    }
}

/// The progress of one running call; [`finish`](Self::finish) it before sending the result.
pub(crate) struct CallProgress {
    task: JoinHandle<()>,
    done: DropGuard,
}

impl CallProgress {
    /// Sends `token`'s progress to `peer`, redacted with `store`'s secrets; returns the sink
    /// for the call's context.
    pub(crate) fn start(
        peer: Peer<RoleServer>,
        token: ProgressToken,
        store: OutputStore,
    ) -> (ProgressSink, Self) {
        let (tx, rx) = watch::channel(Reported::default());
        let sink = ProgressSink::new(move |progress| tx.send_modify(|r| r.absorb(progress)));
        let done = CancellationToken::new();
        let task = tokio::spawn(forward(peer, token, store, rx, done.clone()));
        let done = done.drop_guard();
        (sink, Self { task, done })
    }

    /// Sends what is left (the last line) and returns once it is sent.
    pub(crate) async fn finish(self) {
        drop(self.done);
        if let Err(err) = self.task.await {
            tracing::debug!(%err, "the progress task failed");
        }
    }
}

async fn forward(
    peer: Peer<RoleServer>,
    token: ProgressToken,
    store: OutputStore,
    mut reported: watch::Receiver<Reported>,
    done: CancellationToken,
) {
    let mut sent = 0.0;
    loop {
        let finished = tokio::select! {
            biased;
            () = done.cancelled() => true,
            changed = reported.changed() => changed.is_err(),
        };
        let next = reported.borrow_and_update().next(&mut sent, finished);
        if let Some((progress, total, message)) = next {
            let mut param = ProgressNotificationParam::new(token.clone(), progress);
            param.total = total;
            param.message = message.map(|message| shown(&store, message));
            if peer.notify_progress(param).await.is_err() {
                return;
            }
        }
        if finished {
            return;
        }
        tokio::select! {
            () = done.cancelled() => {}
            () = tokio::time::sleep(INTERVAL) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(reported: &mut Reported, bytes: &[u8]) {
        reported.absorb(Progress::Output {
            stream: OutputStream::Stdout,
            bytes,
        });
    }

    #[test]
    fn the_latest_complete_line_across_chunks() {
        let mut r = Reported::default();
        out(&mut r, b"first\nsec");
        assert_eq!(r.line.as_deref(), Some("first"));
        out(&mut r, b"ond\n\n  \nthi");
        assert_eq!(
            r.line.as_deref(),
            Some("second"),
            "blank lines keep the last"
        );
        let mut sent = 0.0;
        let (progress, total, message) = r.next(&mut sent, false).unwrap();
        assert_eq!((progress, total), (20.0, None));
        assert_eq!(message.as_deref(), Some("second"));
        assert!(r.next(&mut sent, false).is_none(), "nothing new");
        out(&mut r, b"rd");
        // The call ended: its unfinished last line is the last line.
        let (_, _, message) = r.next(&mut sent, true).unwrap();
        assert_eq!(message.as_deref(), Some("third"));
    }

    #[test]
    fn a_line_reads_as_a_terminal_shows_it() {
        assert_eq!(message(b"\x1b[32mok\x1b[0m done\r"), "ok done");
        assert_eq!(message(b" 10%\r 50%\r100%"), "100%");
        // Nothing is written: redacting and cutting touch no file.
        let config = tackle_output_store::StoreConfig::in_data_dir(std::env::temp_dir())
            .with_redactions(["s3cret-value-1234".to_owned()]);
        let store = OutputStore::new(config);
        assert_eq!(shown(&store, "é".repeat(300)).chars().count(), 201);
        assert_eq!(
            shown(&store, message(b"key=s3cret-value-1234 ok")),
            "key=[REDACTED] ok"
        );
        // A line cut at the cap is shown from its start, never from a carriage return near
        // the cut.
        let mut long = b"start\r".to_vec();
        long.extend([b'y'; MAX_LINE_BYTES]);
        assert!(message(&long[..MAX_LINE_BYTES]).starts_with("start y"));
        let mut r = Reported::default();
        out(&mut r, &[b'x'; 5000]);
        out(&mut r, b"\n");
        assert_eq!(r.line.as_ref().map(String::len), Some(MAX_LINE_BYTES));
        assert_eq!(r.bytes, 5001);
    }

    #[test]
    fn steps_carry_their_total_and_only_move_forward() {
        let mut r = Reported::default();
        r.absorb(Progress::Step {
            done: 3,
            total: Some(10),
            message: "files scanned",
        });
        let mut sent = 0.0;
        assert_eq!(
            r.next(&mut sent, false),
            Some((3.0, Some(10.0), Some("files scanned".to_owned())))
        );
        assert_eq!(r.next(&mut sent, true), None);
    }

    /// Redaction sees the whole line before the cut: a secret straddling the 200th
    /// character never shows a fragment, wherever the cut falls inside it.
    #[test]
    fn a_secret_across_the_cut_shows_no_fragment() {
        let secret = "s3cret-value-1234";
        let config = tackle_output_store::StoreConfig::in_data_dir(std::env::temp_dir())
            .with_redactions([secret.to_owned()]);
        let store = OutputStore::new(config);
        for before in MAX_MESSAGE_CHARS - secret.len()..=MAX_MESSAGE_CHARS {
            let line = format!("{}{secret} tail", "x".repeat(before));
            let sent = shown(&store, message(line.as_bytes()));
            assert!(sent.chars().count() <= MAX_MESSAGE_CHARS + 1, "{sent}");
            assert!(!sent.contains("s3c"), "{before}: {sent}");
            let kept = sent.trim_end_matches('…').trim_start_matches('x');
            assert!("[REDACTED] tail".starts_with(kept), "{before}: {sent}");
        }
    }
}
