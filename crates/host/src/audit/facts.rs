//! What the settling thread hands the writer: a call's raw facts, copied into a reused slot.
//!
//! Keeping a record costs the caller only copies into buffers that already have room (slots
//! come back from the writer with their capacity), never an allocation or a formatted value
//! in the common case; the writer builds, redacts and writes the JSON record.

use std::io;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tackle_permission::Decision;
use tackle_registry::SettleRecord;

use super::shape;

/// An input whose compact JSON is at most this long travels as that JSON (a copy into the
/// slot's buffer); a longer one is reduced to its shape on the caller, so no slot holds a
/// large input and the queue's memory stays bounded.
pub(crate) const INLINE_INPUT: usize = 4096;

/// The permission action of the tools whose input carries file contents (edit, write,
/// apply_patch).
const EDIT_ACTION: &str = "edit";

/// One queued record.
pub(crate) enum Entry {
    Call(Box<CallFacts>),
    /// Decisions are rarer than calls and already cost a rule evaluation: the caller clones
    /// it. With the time it was made.
    Decision(Box<Decision>, u64),
}

/// How the call's input travels.
#[derive(Debug, Default)]
pub(crate) enum Input {
    /// Its compact JSON, in [`CallFacts::json`].
    #[default]
    Json,
    /// Too long to copy: its shape, computed on the caller.
    Shaped(Value),
}

/// The facts of one settled call.
#[derive(Debug, Default)]
pub(crate) struct CallFacts {
    pub(crate) time_ms: u64,
    pub(crate) session: String,
    pub(crate) agent: String,
    pub(crate) call_id: String,
    pub(crate) tool: String,
    /// Empty unless another registered name settled the call.
    pub(crate) settled_as: String,
    /// The settled tool writes files: its input's strings are recorded by size.
    pub(crate) edits: bool,
    pub(crate) json: Vec<u8>,
    pub(crate) input: Input,
    pub(crate) bytes_in: u64,
    pub(crate) duration: Duration,
    pub(crate) result: &'static str,
    pub(crate) bytes_out: u64,
    pub(crate) truncated: bool,
    pub(crate) references: Vec<String>,
    pub(crate) error: Option<String>,
}

impl CallFacts {
    /// Copies `settled`'s facts into this slot.
    pub(crate) fn fill(&mut self, settled: &SettleRecord<'_>) {
        let call = settled.call;
        let ctx = settled.context;
        self.time_ms = shape::now_ms();
        copy(&mut self.session, &ctx.session_id);
        copy(&mut self.agent, &ctx.agent);
        copy(&mut self.call_id, &call.id);
        copy(&mut self.tool, &call.name);
        copy(
            &mut self.settled_as,
            settled.tool.filter(|tool| *tool != call.name).unwrap_or(""),
        );
        self.edits = settled.action == Some(EDIT_ACTION);
        self.json.clear();
        let mut capped = Capped(&mut self.json);
        if serde_json::to_writer(&mut capped, &call.input).is_ok() {
            self.bytes_in = self.json.len() as u64;
            self.input = Input::Json;
        } else {
            self.json.clear();
            self.bytes_in = settled.bytes_in();
            self.input = Input::Shaped(shape::shape(&call.input, self.edits, None));
        }
        self.duration = settled.duration;
        self.result = settled.result_type();
        self.bytes_out = settled.bytes_out();
        self.truncated = settled.truncated();
        self.references.clear();
        // Only a cut result has references: allocating for them is rare.
        self.references
            .extend(settled.references().iter().map(ToString::to_string));
        // A halt or defect: its message says why, never a file's contents.
        self.error = settled.outcome.err().map(ToString::to_string);
    }
}

fn copy(to: &mut String, from: &str) {
    to.clear();
    to.push_str(from);
}

/// A buffer that refuses to grow past [`INLINE_INPUT`].
struct Capped<'a>(&'a mut Vec<u8>);

impl io::Write for Capped<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.0.len() + buf.len() > INLINE_INPUT {
            return Err(io::Error::other("input too long to copy"));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Emptied slots, handed back by the writer for the next calls.
#[derive(Default)]
pub(crate) struct Pool {
    #[expect(
        clippy::vec_box,
        reason = "a slot moves between the queue and the pool as one pointer"
    )]
    free: Mutex<Vec<Box<CallFacts>>>,
}

impl Pool {
    /// A slot with room, or a new one (while the pool warms up, or when every slot is queued).
    pub(crate) fn take(&self) -> Box<CallFacts> {
        self.free
            .lock()
            .ok()
            .and_then(|mut free| free.pop())
            .unwrap_or_default()
    }

    /// Gives `slots` back, keeping at most `max` of them; a slot that held an unusually long
    /// string gives that memory back first.
    pub(crate) fn give(&self, slots: impl IntoIterator<Item = Box<CallFacts>>, max: usize) {
        let Ok(mut free) = self.free.lock() else {
            return;
        };
        for mut slot in slots {
            if free.len() >= max {
                break;
            }
            slot.shrink();
            free.push(slot);
        }
    }
}

impl CallFacts {
    /// Lets go of what a waiting slot should not hold: no buffer stays large, nothing rare
    /// stays allocated.
    fn shrink(&mut self) {
        const KEEP: usize = 256;
        for text in [
            &mut self.session,
            &mut self.agent,
            &mut self.call_id,
            &mut self.tool,
            &mut self.settled_as,
        ] {
            if text.capacity() > KEEP {
                *text = String::new();
            }
        }
        if self.json.capacity() > INLINE_INPUT {
            self.json = Vec::new();
        }
        self.input = Input::Json;
        self.references = Vec::new();
        self.error = None;
    }
}
