//! One line of a page: skipped to a character, kept within the budget, cut between
//! characters.

use crate::text::{Text, line_marker};

/// One line being read from a character position: the characters before it are skipped,
/// then at most `keep` bytes are kept (the rest is only consumed), so memory stays bounded
/// whatever the length of the line.
///
/// A character starts at every byte that is not a UTF-8 continuation byte, and at the fourth
/// continuation byte in a row (no character is longer): for valid UTF-8 these are exactly its
/// characters, and invalid bytes can never make one "character" unbounded. The spill cap's gap
/// also starts a character: bytes on both sides of it never form one.
#[derive(Debug)]
pub(super) struct LineAcc {
    /// Characters still to skip.
    skip: u64,
    /// Characters skipped so far.
    pub(super) skipped: u64,
    /// Still looking for the first character to keep.
    pub(super) skipping: bool,
    keep: usize,
    kept: Vec<u8>,
    /// Bytes since the last character start (4: the next byte starts one).
    run: u8,
    /// More of the line follows what was kept.
    more: bool,
    /// Where in `kept` the spill cap's gap lies, and how many bytes it dropped.
    pub(super) gap: Option<(usize, u64)>,
}

/// What a page shows of one line.
pub(super) enum Shown {
    /// All of it (from the page's column, for the first line).
    Whole(String, bool),
    /// Its first characters, `chars` of them: the line continues on the next page.
    Part {
        text: String,
        invalid: bool,
        chars: u64,
    },
    /// Nothing: it does not fit, and the page ends before it.
    Nothing,
}

fn starts_char(byte: u8, run: u8) -> bool {
    run >= 4 || byte & 0xC0 != 0x80
}

impl LineAcc {
    pub(super) fn new(skip: u64, keep: usize) -> Self {
        Self {
            skip,
            skipped: 0,
            skipping: skip > 0,
            // One byte more than shown at most, to see whether a character starts after it.
            keep: keep.saturating_add(1),
            kept: Vec::new(),
            run: 4,
            more: false,
            gap: None,
        }
    }

    pub(super) fn feed(&mut self, bytes: &[u8]) {
        let mut at = 0;
        if self.skipping {
            while at < bytes.len() {
                if starts_char(bytes[at], self.run) {
                    if self.skip == 0 {
                        self.skipping = false;
                        break;
                    }
                    self.skip -= 1;
                    self.skipped += 1;
                    self.run = 1;
                } else {
                    self.run += 1;
                }
                at += 1;
            }
            if self.skipping {
                return;
            }
        }
        let rest = &bytes[at..];
        let take = self.keep.saturating_sub(self.kept.len()).min(rest.len());
        self.kept.extend_from_slice(&rest[..take]);
        self.more |= rest.len() > take;
    }

    pub(super) fn gap(&mut self, dropped: u64) {
        self.run = 4;
        if self.skipping {
            if self.skip > 0 {
                return;
            }
            // The first character to show is the one after the gap: the gap comes first.
            self.skipping = false;
        }
        if self.more || self.kept.len() >= self.keep {
            self.more = true;
        } else {
            self.gap = Some((self.kept.len(), dropped));
        }
    }

    /// The character starts of `kept` (a gap starts one too).
    fn starts(&self) -> Vec<bool> {
        let mut run = 4u8;
        self.kept
            .iter()
            .enumerate()
            .map(|(at, &byte)| {
                if self.gap.is_some_and(|(gap, _)| gap == at) {
                    run = 4;
                }
                let start = starts_char(byte, run);
                run = if start { 1 } else { run.saturating_add(1) };
                start
            })
            .collect()
    }

    /// `kept[..end]` as shown, with the gap's marker when the gap lies before `end` (or at it,
    /// when `end` is the line's end).
    fn render(&self, end: usize, whole: bool) -> (String, bool) {
        match self.gap {
            Some((gap, dropped)) if gap < end || (whole && gap == end) => {
                let (head, head_lossy) = lossy(&self.kept[..gap]);
                let (tail, tail_lossy) = lossy(&self.kept[gap..end]);
                let text = format!("{head}{}{tail}", line_marker(dropped));
                (text, head_lossy || tail_lossy)
            }
            _ => lossy(&self.kept[..end]),
        }
    }

    /// What fits in `budget` displayed bytes; the first line of a page always shows at least
    /// one character, so every page makes progress.
    pub(super) fn show(&self, budget: usize, first: bool) -> Shown {
        let marker = self
            .gap
            .map_or(0, |(_, dropped)| line_marker(dropped).len());
        let text = Text::bytes(&self.kept);
        let fits = text.display_len(0..self.kept.len()) + marker <= budget;
        if !self.more && (fits || (first && self.kept.is_empty())) {
            let (text, invalid) = self.render(self.kept.len(), true);
            return Shown::Whole(text, invalid);
        }
        if !first {
            return Shown::Nothing;
        }
        let all = 0..self.kept.len();
        let mut end = text.prefix(all.clone(), budget).0;
        if let Some((gap, _)) = self.gap
            && gap < end
        {
            // With the marker shown, less text fits; if too little, stop at the gap.
            end = text.prefix(all, budget.saturating_sub(marker)).0.max(gap);
        }
        let starts = self.starts();
        // The end of what was kept is a character start only where the line ends: otherwise
        // the kept bytes may stop inside a character.
        let starts_at = |at: usize| starts.get(at).copied().unwrap_or(!self.more);
        while end > 0 && !starts_at(end) {
            end -= 1;
        }
        if end == 0 && !self.kept.is_empty() {
            // Not even one character fits: show one anyway.
            end = (1..starts.len())
                .find(|&at| starts[at])
                .unwrap_or(starts.len());
        }
        let chars = starts[..end].iter().filter(|&&start| start).count() as u64;
        let (text, invalid) = self.render(end, false);
        Shown::Part {
            text,
            invalid,
            chars,
        }
    }
}

fn lossy(bytes: &[u8]) -> (String, bool) {
    match String::from_utf8(bytes.to_vec()) {
        Ok(text) => (text, false),
        Err(err) => (String::from_utf8_lossy(err.as_bytes()).into_owned(), true),
    }
}
