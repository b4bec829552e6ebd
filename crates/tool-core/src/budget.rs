//! How much model-visible output one call may produce.
//!
//! The budget is defined here, once, because it travels with every call in the [`Context`]:
//! the host's output store decides it, settle puts it in the context, and the leaves that shape
//! their own output (a page of a file, a compacted patch report) ask it instead of keeping
//! their own constants. The budget counts the whole model text: a leaf that frames its content
//! (tags, line numbers, a status line) takes the frame's lines and bytes from the budget before
//! it cuts the content, so settle's bound finds nothing to cut in its output.
//!
//! [`Context`]: crate::Context

/// Lines of model text a result may have by default, marker included.
pub const MAX_LINES: usize = 2000;
/// Bytes of model text a result may have by default, marker included.
pub const MAX_BYTES: usize = 50 * 1024;
/// The largest structured value (compact JSON bytes) kept inline by default.
pub const MAX_STRUCTURED_BYTES: usize = 16 * 1024;

/// The output limits of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Budget {
    /// Lines of model text.
    pub max_lines: usize,
    /// Bytes of model text.
    pub max_bytes: usize,
}

impl Budget {
    /// The default budget: [`MAX_LINES`] lines and [`MAX_BYTES`] bytes.
    pub const DEFAULT: Budget = Budget {
        max_lines: MAX_LINES,
        max_bytes: MAX_BYTES,
    };

    /// A budget of `max_lines` lines and `max_bytes` bytes.
    pub const fn new(max_lines: usize, max_bytes: usize) -> Self {
        Self {
            max_lines,
            max_bytes,
        }
    }

    /// The largest structured value kept inline: [`MAX_STRUCTURED_BYTES`], or `max_bytes` when
    /// that is smaller.
    pub const fn max_structured_bytes(&self) -> usize {
        if self.max_bytes < MAX_STRUCTURED_BYTES {
            self.max_bytes
        } else {
            MAX_STRUCTURED_BYTES
        }
    }
}

/// Lines as the bound counts them: `\n`-terminated segments plus a final unterminated one, so
/// `"a\nb"` and `"a\nb\n"` both have two lines and `""` has none. The one definition of a line
/// count that every budget check uses (the output store's included).
pub fn count_lines(bytes: &[u8]) -> u64 {
    // memchr's vectorised count: a command's output can be megabytes.
    memchr::memchr_iter(b'\n', bytes).count() as u64
        + u64::from(bytes.last().is_some_and(|b| *b != b'\n'))
}

impl Default for Budget {
    fn default() -> Self {
        Self::DEFAULT
    }
}
