//! The size limits on what a model sends, in one place.
//!
//! Every string and array of a builtin's input is bounded in its input schema
//! (`#[schemars(length(max = ...))]`), and tool-core's input check refuses a value past its
//! bound before the tool runs: no pattern is parsed, no command is parsed, no file is touched
//! and no process starts. Each limit is far above what a real call needs and low enough that
//! the work done on a value at the limit is small next to a serving process's memory.
//!
//! Lengths are counted in characters (as JSON Schema counts them); a character is at most four
//! bytes.

/// A path (a file to read, edit or write, a search root, a working directory): the longest
/// path Linux resolves is 4096 bytes, so no longer path could name a file.
pub(crate) const MAX_PATH_CHARS: usize = 4096;

/// A search pattern (grep's regex, glob's and grep's `include` globs, a job output filter).
/// Parsing costs about a hundred bytes of memory per byte of pattern before any size limit of
/// the compiled regex applies, so the length itself must be bounded; 16 Ki characters holds an
/// alternation of a thousand identifiers and costs a few megabytes at most to parse.
#[cfg(any(feature = "search", feature = "bash"))]
pub(crate) const MAX_PATTERN_CHARS: usize = 16 * 1024;

/// How much memory a compiled search regex may take (its automaton, before any search). A
/// written regex compiles to kilobytes; a short pattern that multiplies itself
/// (`(a{1000}){1000}`) is refused at this size instead of taking gigabytes.
#[cfg(any(feature = "search", feature = "bash"))]
pub(crate) const MAX_REGEX_BYTES: usize = 10 << 20;

/// The memory the lazily built matcher of one search may cache. Past it the cache is cleared
/// and rebuilt (a slower search, never a failure), so a modest bound costs nothing a real
/// pattern notices and keeps a hostile one from growing per search thread.
#[cfg(any(feature = "search", feature = "bash"))]
pub(crate) const MAX_REGEX_CACHE_BYTES: usize = 64 << 20;

/// How deeply a regex may nest groups and repetitions. The parser and compiler walk one level
/// at a time and a written regex nests a handful; a pattern of thousands of `(` is refused at
/// once, whatever stack the searching thread has.
#[cfg(any(feature = "search", feature = "bash"))]
pub(crate) const MAX_REGEX_NESTING: u32 = 100;

/// A bash command: it is one argument to the shell's `-c`, and Linux takes at most 128 KiB
/// (with the closing NUL) as one argument, so a longer command could never start. Parsing is
/// bounded by this too.
#[cfg(feature = "bash")]
pub(crate) const MAX_COMMAND_CHARS: usize = 128 * 1024 - 1;

/// A file's whole content as it is sent: write's `content`, edit's `oldString` and
/// `newString`, apply_patch's `patchText`. A model writes far less in one response, but
/// `tackle call write -` takes whole files from scripts, and a write of 200 MiB is measured to
/// stay within 2.5 times its size in memory (docs/benchmarks.md); 256 Mi characters keeps that
/// working while bounding what one call can hold.
pub(crate) const MAX_CONTENT_CHARS: usize = 256 * 1024 * 1024;

/// A URL to fetch: web servers commonly refuse request lines past 8 KiB.
#[cfg(feature = "web")]
pub(crate) const MAX_URL_CHARS: usize = 8 * 1024;

/// A short text a model writes for a person or a provider: a web search query, a question, an
/// option's label or description, a todo item, a command's description, a job id. 4 Ki
/// characters is pages of prose, more than any of them needs.
pub(crate) const MAX_TEXT_CHARS: usize = 4 * 1024;

/// A list a model writes item by item (todos, questions, options): a person reads each item,
/// and a list of a thousand is already more than one can.
pub(crate) const MAX_ITEMS: usize = 1000;
