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
//!
//! Invariant: the text is never much larger than the bytes it came from, whatever they are:
//! `text.len() <= 4 * bytes.len() + MAX_COLUMNS`. A printed character takes at least one input
//! byte and at most three output bytes per input byte (U+FFFD for one invalid byte), a line
//! break one byte for one; the only output no input byte paid for is the blank a cursor move
//! leaves before the next character, and that padding is drawn from an allowance of one space
//! per input byte plus [`MAX_COLUMNS`] for the whole stream, and never makes a line longer
//! than [`MAX_COLUMNS`]. Work is linear in the input as well: erasing to the cursor skips the
//! part of the line already blank.

use std::mem;

/// Normalised text of one stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Normalized {
    pub(crate) text: String,
    /// The bytes were not valid UTF-8; invalid sequences were replaced with U+FFFD.
    pub(crate) invalid_utf8: bool,
}

/// The widest line cursor moves can address: wider than any terminal a person reads output in
/// (a large screen at a small font holds a few hundred columns), so progress bars and column
/// layouts drawn by moves come out as on a terminal, while a move further right stops here, as
/// a terminal stops at its right margin. Without it, `ESC [ 65535 C` (8 bytes) would ask for a
/// line of 65535 spaces.
pub(crate) const MAX_COLUMNS: usize = 1024;

/// The most bytes of text a stream of `input_len` bytes becomes (the module invariant).
pub fn terminal_text_bound(input_len: usize) -> usize {
    input_len.saturating_mul(4).saturating_add(MAX_COLUMNS)
}

/// The text `bash` and `job_output` show for `bytes`, one stream of a command's output: what a
/// terminal would finally show, as plain text, never longer than
/// [`terminal_text_bound`]`(bytes.len())`. Invalid UTF-8 is shown as U+FFFD.
pub fn terminal_text(bytes: Vec<u8>) -> String {
    normalize(bytes).text
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
    let mut screen = Screen::new(bytes.len());
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
#[derive(Debug)]
struct Screen {
    done: String,
    line: Vec<char>,
    cursor: usize,
    /// `line[..blank]` holds only spaces (erasing to the cursor again has nothing to do there).
    blank: usize,
    /// Spaces cursor moves may still leave before a character (see the module invariant).
    padding_left: usize,
}

impl Screen {
    /// A screen for a stream of `input_len` bytes.
    fn new(input_len: usize) -> Self {
        Self {
            done: String::new(),
            line: Vec::new(),
            cursor: 0,
            blank: 0,
            padding_left: input_len.saturating_add(MAX_COLUMNS),
        }
    }

    fn put(&mut self, c: char) {
        if self.cursor < self.line.len() {
            self.line[self.cursor] = c;
            self.blank = self.blank.min(self.cursor);
            self.cursor += 1;
            return;
        }
        // The cursor was moved past the end: blanks up to it, within the line's width and
        // what is left of the stream's allowance; a character beyond either comes right after.
        let gap = self.cursor - self.line.len();
        let room = (MAX_COLUMNS - 1).saturating_sub(self.line.len());
        let pad = gap.min(room).min(self.padding_left);
        self.padding_left -= pad;
        self.line.resize(self.line.len() + pad, ' ');
        self.line.push(c);
        self.cursor = self.line.len();
    }

    /// Where a move to column `target` (0-based) ends: at most the right margin, the last of
    /// [`MAX_COLUMNS`] columns, or the end of a line printed longer than that.
    fn clamped(&self, target: usize) -> usize {
        target.min(self.line.len().max(MAX_COLUMNS - 1))
    }

    fn newline(&mut self) {
        self.done.extend(mem::take(&mut self.line));
        self.done.push('\n');
        self.cursor = 0;
        self.blank = 0;
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
                None | Some(0) => {
                    self.line.truncate(self.cursor);
                    self.blank = self.blank.min(self.line.len());
                }
                Some(1) => {
                    // Only what is not blank yet: repeated erases cost nothing more.
                    let end = (self.cursor + 1).min(self.line.len());
                    if end > self.blank {
                        self.line[self.blank..end].iter_mut().for_each(|c| *c = ' ');
                        self.blank = end;
                    }
                }
                Some(2) => {
                    self.line.clear();
                    self.blank = 0;
                }
                Some(_) => {}
            },
            'G' => self.cursor = self.clamped(usize::from(first_param(params, 1)) - 1),
            'C' => {
                let target = self
                    .cursor
                    .saturating_add(usize::from(first_param(params, 1)));
                self.cursor = self.clamped(target);
            }
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
    use proptest::prelude::*;

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

    fn bound(input_len: usize) -> usize {
        let bound = terminal_text_bound(input_len);
        assert_eq!(bound, 4 * input_len + MAX_COLUMNS);
        bound
    }

    #[test]
    fn cursor_moves_are_clamped_at_the_right_margin() {
        // 8 bytes that asked for a line of 65535 spaces.
        let got = text(b"\x1b[65535Cx");
        assert_eq!(got.len(), MAX_COLUMNS);
        assert!(got.ends_with('x'));
        let got = text(b"\x1b[65535Gx");
        assert_eq!(got.len(), MAX_COLUMNS);
        // A move back from the margin lands inside the line, as on a terminal.
        assert_eq!(text(b"\x1b[65535C\x1b[1Dab").len(), MAX_COLUMNS);
        // Moves within a line longer than the margin still reach its end, and no further.
        let long = "y".repeat(3 * MAX_COLUMNS);
        let mut bytes = long.clone().into_bytes();
        bytes.extend_from_slice(b"\r\x1b[65535Cz");
        assert_eq!(text(&bytes), format!("{long}z"));
        // Ordinary moves are drawn as before.
        assert_eq!(text(b"a\x1b[3Cb"), "a   b");
        assert_eq!(text(b"\x1b[5Gx"), "    x");
    }

    #[test]
    fn a_stream_of_moves_stays_within_the_bound() {
        // A 128 KB stream of the 8-byte attack, each on its own line: it asked for 8.4 GB.
        let attack = b"\x1b[65535Cx\n".repeat(128 * 1024 / 10);
        let got = text(&attack);
        assert!(got.len() <= bound(attack.len()), "{}", got.len());
        // The allowance is spent, then characters follow one another.
        assert!(got.len() < 3 * attack.len());
        // The same without line breaks, and with the column form.
        for attack in [
            b"\x1b[65535Cx".repeat(16 * 1024),
            b"\x1b[65535Gx\r".repeat(16 * 1024),
            b"\x1b[65535Gx\x1b[2K".repeat(16 * 1024),
        ] {
            let got = text(&attack);
            assert!(got.len() <= bound(attack.len()), "{}", got.len());
        }
    }

    #[test]
    fn other_controls_never_amplify() {
        for attack in [
            b"\x08".repeat(10_000),
            b"\t".repeat(10_000),
            b"\t\x1b[K".repeat(10_000),
            b"\x1b[65535K\x1b[65535J\x1b[65535@\x1b[65535X\x1b[65535P".repeat(1_000),
            b"\xff\x1b[m".repeat(10_000),
        ] {
            let got = text(&attack);
            assert!(got.len() <= bound(attack.len()), "{}", got.len());
        }
        // Erasing to the cursor again and again touches only what is not blank yet (this
        // would take minutes if each erase rewrote the line).
        let mut bytes = b"z".repeat(500_000);
        bytes.extend(b"\x1b[1K".repeat(100_000));
        bytes.push(b'!');
        let got = text(&bytes);
        assert_eq!(got.len(), 500_001);
        assert!(got.ends_with("zzz!") || got.ends_with(" !"));
    }

    proptest! {
        #[test]
        fn text_is_never_more_than_a_constant_factor_of_its_input(
            bytes in prop::collection::vec(
                prop_oneof![
                    any::<u8>().prop_map(|b| vec![b]),
                    prop::sample::select(vec![
                        b"\x1b[65535C".to_vec(), b"\x1b[65535G".to_vec(), b"\x1b[9D".to_vec(),
                        b"\x1b[1K".to_vec(), b"\x1b[2K".to_vec(), b"\x1b[K".to_vec(),
                        b"\r".to_vec(), b"\n".to_vec(), b"\x08".to_vec(), b"\t".to_vec(),
                        b"\xff".to_vec(), "\u{2713}".as_bytes().to_vec(),
                    ]),
                ],
                0..400,
            )
        ) {
            let bytes: Vec<u8> = bytes.concat();
            let got = normalize(bytes.clone()).text;
            prop_assert!(got.len() <= bound(bytes.len()), "{} for {}", got.len(), bytes.len());
        }
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
