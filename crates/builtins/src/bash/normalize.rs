//! Output normalisation before settlement: what a terminal would finally show, as plain text.
//!
//! - ANSI CSI sequences (colours, cursor moves), OSC (titles, hyperlinks), DCS and other escape
//!   sequences are removed.
//! - `\r` and backspace redraws are applied to the line they edit, as a terminal would, so a
//!   progress bar collapses to its final state; erase-in-line (`ESC [ K`) and column moves
//!   (`ESC [ G/C/D`) are honoured because progress bars use them to redraw.
//! - `\r\n` is a line break. Vertical cursor moves are not emulated: such redraws keep every
//!   frame, one per line.
//! - Invalid UTF-8 becomes U+FFFD and is reported, never passed on silently.
//!
//! Text without escape or control bytes takes a fast path that copies it unchanged.

use std::mem;

/// Normalised text of one stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Normalized {
    pub(crate) text: String,
    /// The bytes were not valid UTF-8; invalid sequences were replaced with U+FFFD.
    pub(crate) invalid_utf8: bool,
}

/// Normalises `bytes` (one stream, or one kept piece of it).
pub(crate) fn normalize(bytes: Vec<u8>) -> Normalized {
    if !needs_terminal(&bytes) {
        // The common case: plain text, taken over without a copy when it is valid UTF-8.
        return match String::from_utf8(bytes) {
            Ok(text) => Normalized {
                text,
                invalid_utf8: false,
            },
            Err(err) => Normalized {
                text: String::from_utf8_lossy(err.as_bytes()).into_owned(),
                invalid_utf8: true,
            },
        };
    }
    let invalid_utf8 = std::str::from_utf8(&bytes).is_err();
    let mut screen = Screen::default();
    let mut parser = vte::Parser::new();
    parser.advance(&mut screen, &bytes);
    Normalized {
        text: screen.finish(),
        invalid_utf8,
    }
}

/// True when a byte needs terminal handling: C0 controls other than `\n`/`\t` (escapes start
/// with ESC, one of them), and DEL.
fn needs_terminal(bytes: &[u8]) -> bool {
    // Integer arithmetic without branches within a block, so the scan vectorises.
    bytes.chunks(512).any(|block| {
        block.iter().fold(0u8, |found, &b| {
            let control = u8::from(b < 0x20) & u8::from(b != b'\n') & u8::from(b != b'\t');
            found | control | u8::from(b == 0x7f)
        }) != 0
    })
}

/// A one-line terminal: the line being drawn, the cursor on it, and the finished text.
#[derive(Debug, Default)]
struct Screen {
    done: String,
    line: Vec<char>,
    cursor: usize,
}

impl Screen {
    fn put(&mut self, c: char) {
        if self.cursor < self.line.len() {
            self.line[self.cursor] = c;
        } else {
            self.line.resize(self.cursor, ' ');
            self.line.push(c);
        }
        self.cursor += 1;
    }

    fn newline(&mut self) {
        self.done.extend(mem::take(&mut self.line));
        self.done.push('\n');
        self.cursor = 0;
    }

    fn finish(mut self) -> String {
        self.done.extend(mem::take(&mut self.line));
        self.done
    }
}

/// The first parameter of a CSI sequence, or `default` when absent or zero-defaulted.
fn first_param(params: &vte::Params, default: u16) -> u16 {
    params
        .iter()
        .next()
        .and_then(|p| p.first().copied())
        .filter(|&n| n != 0)
        .unwrap_or(default)
}

impl vte::Perform for Screen {
    fn print(&mut self, c: char) {
        self.put(c);
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' | 0x0b | 0x0c => self.newline(),
            b'\r' => self.cursor = 0,
            0x08 => self.cursor = self.cursor.saturating_sub(1),
            b'\t' => self.put('\t'),
            // BEL, NUL and the other controls draw nothing.
            _ => {}
        }
    }

    fn csi_dispatch(
        &mut self,
        params: &vte::Params,
        intermediates: &[u8],
        _ignore: bool,
        action: char,
    ) {
        if !intermediates.is_empty() {
            return;
        }
        match action {
            // Erase in line: 0 = to the end, 1 = to the cursor, 2 = the whole line.
            'K' => match params.iter().next().and_then(|p| p.first().copied()) {
                None | Some(0) => self.line.truncate(self.cursor),
                Some(1) => {
                    let end = (self.cursor + 1).min(self.line.len());
                    self.line[..end].iter_mut().for_each(|c| *c = ' ');
                }
                Some(2) => self.line.clear(),
                Some(_) => {}
            },
            'G' => self.cursor = usize::from(first_param(params, 1)) - 1,
            'C' => self.cursor += usize::from(first_param(params, 1)),
            'D' => {
                self.cursor = self
                    .cursor
                    .saturating_sub(usize::from(first_param(params, 1)))
            }
            // Colours, modes and vertical moves draw nothing on one line.
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> String {
        normalize(bytes.to_vec()).text
    }

    #[test]
    fn plain_text_is_unchanged() {
        assert_eq!(text(b"hello\n\tworld\n"), "hello\n\tworld\n");
        assert_eq!(text("héllo ✓\n".as_bytes()), "héllo ✓\n");
        assert!(!normalize(b"ok".to_vec()).invalid_utf8);
    }

    #[test]
    fn colours_and_osc_are_stripped() {
        assert_eq!(text(b"\x1b[1;31merror\x1b[0m: x\n"), "error: x\n");
        assert_eq!(text(b"\x1b]0;title\x07after"), "after");
        assert_eq!(
            text(b"\x1b]8;;http://example.com\x1b\\link\x1b]8;;\x1b\\"),
            "link"
        );
        assert_eq!(text(b"a\x1bPq#0;2;0;0;0\x1b\\b"), "ab");
    }

    #[test]
    fn carriage_return_redraws_collapse() {
        assert_eq!(text(b"10%\r50%\r100%\ndone\n"), "100%\ndone\n");
        assert_eq!(text(b"line\r\nnext\r\n"), "line\nnext\n");
        // A shorter redraw without erase leaves what a terminal leaves.
        assert_eq!(text(b"100%\r5%"), "5%0%");
        assert_eq!(text(b"Downloading 100 MB\r\x1b[KDone\n"), "Done\n");
        assert_eq!(text(b"Downloading\r\x1b[2KOK"), "OK");
        assert_eq!(text(b"progress: 3\x1b[1Gfinal!!!!!!"), "final!!!!!!");
    }

    #[test]
    fn backspace_redraws_collapse() {
        assert_eq!(text(b"|\x08/\x08-\x08\\\x08done\n"), "done\n");
        assert_eq!(text(b"ab\x08\x08\x08c"), "cb");
    }

    #[test]
    fn invalid_utf8_is_replaced_and_reported() {
        let got = normalize(b"ok \xff\xfe end".to_vec());
        assert!(got.invalid_utf8);
        assert!(got.text.starts_with("ok "));
        assert!(got.text.contains('\u{fffd}'));
        assert!(got.text.ends_with(" end"));
        let with_escape = normalize(b"\x1b[1m\xc3\x28\x1b[0m".to_vec());
        assert!(with_escape.invalid_utf8);
        assert!(with_escape.text.contains('\u{fffd}'));
    }
}
