//! Bounded capture of one output stream: the first and the last half of the budget are kept,
//! everything in between is counted, never stored.
//!
//! Invariants: memory never exceeds the budget (plus one read buffer, held by the caller);
//! `kept + dropped == total` exactly; the stream is read to its end whatever its size, so a
//! writer never blocks on a full pipe because we stopped reading.

/// What one stream produced, bounded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Captured {
    /// The kept bytes from the start of the stream.
    pub(crate) head: Vec<u8>,
    /// The kept bytes from the end of the stream; empty unless something was dropped.
    pub(crate) tail: Vec<u8>,
    /// Every byte the stream produced.
    pub(crate) total: u64,
}

impl Captured {
    /// Bytes that were produced but not kept.
    pub(crate) fn dropped(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }
}

/// A stream being captured within `limit` bytes.
#[derive(Debug)]
pub(crate) struct Capture {
    /// Everything so far while it fits the limit; afterwards the first `head_limit` bytes.
    head: Vec<u8>,
    head_limit: usize,
    limit: usize,
    /// Empty until the limit is first exceeded; then a full ring of the last `tail_limit`
    /// bytes whose oldest byte is at `start`.
    tail: Vec<u8>,
    tail_limit: usize,
    start: usize,
    total: u64,
}

/// The first push reserves the whole limit (at most this much): memory that is never written
/// is never faulted in, and the buffer is then never copied to grow.
const FIRST_RESERVE: usize = 1024 * 1024;

impl Capture {
    /// A capture keeping at most `limit` bytes: `limit / 2` from the start, the rest from the
    /// end.
    pub(crate) fn new(limit: usize) -> Self {
        let head_limit = limit / 2;
        Self {
            head: Vec::new(),
            head_limit,
            limit,
            tail: Vec::new(),
            tail_limit: limit - head_limit,
            start: 0,
            total: 0,
        }
    }

    /// Appends the next bytes of the stream.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.tail.is_empty() {
            // Still within the limit: keep everything in one buffer, so the common case is
            // never copied again.
            if self.head.len() + bytes.len() <= self.limit {
                if self.head.capacity() == 0 {
                    self.head
                        .reserve(self.limit.min(FIRST_RESERVE).max(bytes.len()));
                }
                self.head.extend_from_slice(bytes);
                return;
            }
            // The limit is exceeded for the first time: split into head and ring.
            let fill = self.limit - self.head.len();
            self.head.extend_from_slice(&bytes[..fill]);
            bytes = &bytes[fill..];
            self.tail = self.head.split_off(self.head_limit);
            self.head.shrink_to_fit();
            self.start = 0;
            if self.tail_limit == 0 {
                return;
            }
        }
        if self.tail_limit == 0 {
            return;
        }
        if bytes.len() >= self.tail_limit {
            // Only the last `tail_limit` bytes can survive; the ring restarts with them.
            self.tail
                .copy_from_slice(&bytes[bytes.len() - self.tail_limit..]);
            self.start = 0;
            return;
        }
        // Overwrite the oldest bytes, in at most two pieces.
        while !bytes.is_empty() {
            let take = bytes.len().min(self.tail_limit - self.start);
            self.tail[self.start..self.start + take].copy_from_slice(&bytes[..take]);
            self.start = (self.start + take) % self.tail_limit;
            bytes = &bytes[take..];
        }
    }

    /// The bounded result. Without drops, everything is in `head`.
    pub(crate) fn finish(self) -> Captured {
        let mut head = self.head;
        let mut tail = self.tail;
        if tail.is_empty() {
            return Captured {
                head,
                tail,
                total: self.total,
            };
        }
        tail.rotate_left(self.start);
        // Cut on character boundaries so the gap never splits a UTF-8 sequence (which would
        // read as invalid output); the cut bytes count as dropped.
        head.truncate(complete_prefix(&head));
        let skip = continuation_prefix(&tail);
        tail.drain(..skip);
        Captured {
            head,
            tail,
            total: self.total,
        }
    }
}

/// The length of `bytes` without a trailing, incomplete UTF-8 sequence.
pub(crate) fn complete_prefix(bytes: &[u8]) -> usize {
    // A sequence is at most 4 bytes, so only the last 3 can start an incomplete one.
    for back in 1..=bytes.len().min(3) {
        let at = bytes.len() - back;
        let byte = bytes[at];
        if byte & 0xC0 == 0x80 {
            continue;
        }
        let width = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if width > back { at } else { bytes.len() };
    }
    bytes.len()
}

/// How many leading bytes of `bytes` continue a sequence that started before it (at most 3).
fn continuation_prefix(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take(3)
        .take_while(|byte| *byte & 0xC0 == 0x80)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn capture(limit: usize, chunks: &[&[u8]]) -> Captured {
        let mut capture = Capture::new(limit);
        for chunk in chunks {
            capture.push(chunk);
        }
        capture.finish()
    }

    #[test]
    fn within_the_limit_everything_is_kept() {
        let got = capture(10, &[b"abc", b"defg"]);
        assert_eq!(got.head, b"abcdefg");
        assert!(got.tail.is_empty());
        assert_eq!(got.dropped(), 0);
        assert_eq!(got.dropped(), 0);
        let exact = capture(4, &[b"ab", b"cd"]);
        assert_eq!(exact.head, b"abcd");
        assert_eq!(exact.dropped(), 0);
    }

    #[test]
    fn past_the_limit_head_and_tail_are_kept_and_the_rest_counted() {
        let got = capture(4, &[b"0123", b"456789"]);
        assert_eq!(got.head, b"01");
        assert_eq!(got.tail, b"89");
        assert_eq!(got.total, 10);
        assert_eq!(got.dropped(), 6);
    }

    #[test]
    fn the_ring_wraps_in_small_pieces() {
        let chunks: Vec<[u8; 1]> = (b'a'..=b'z').map(|b| [b]).collect();
        let slices: Vec<&[u8]> = chunks.iter().map(|c| c.as_slice()).collect();
        let got = capture(6, &slices);
        assert_eq!(got.head, b"abc");
        assert_eq!(got.tail, b"xyz");
        assert_eq!(got.dropped(), 20);
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        // "é" is 0xC3 0xA9; the head would end on 0xC3 and the tail start on 0xA9.
        let text = "aaé".repeat(4);
        let got = capture(6, &[text.as_bytes()]);
        assert!(std::str::from_utf8(&got.head).is_ok());
        assert!(std::str::from_utf8(&got.tail).is_ok());
        assert_eq!(
            got.head.len() as u64 + got.tail.len() as u64 + got.dropped(),
            text.len() as u64
        );
    }

    proptest! {
        #[test]
        fn kept_plus_dropped_is_total_and_ends_match(
            data in proptest::collection::vec(any::<u8>(), 0..400),
            limit in 0usize..64,
            chunk in 1usize..50,
        ) {
            let mut c = Capture::new(limit);
            for piece in data.chunks(chunk) {
                c.push(piece);
            }
            let got = c.finish();
            prop_assert_eq!(got.total, data.len() as u64);
            prop_assert!(got.head.len() + got.tail.len() <= limit.max(data.len().min(limit)));
            prop_assert_eq!(got.head.len() as u64 + got.tail.len() as u64 + got.dropped(), got.total);
            prop_assert!(data.starts_with(&got.head));
            prop_assert!(data.ends_with(&got.tail));
            if data.len() <= limit {
                prop_assert_eq!(&got.head, &data);
            }
        }
    }
}
