//! What the settling thread hands the writer: a call's or a decision's raw facts, copied into
//! a reused slot.
//!
//! Keeping a record costs the caller only copies into buffers that already have room (slots
//! come back from the writer with their capacity), never an allocation or a formatted value
//! in the common case; the writer builds, redacts and writes the JSON record. Nothing the
//! caller allocated is freed by the writer either: memory freed on another thread goes back
//! through the allocator's shared lists, which the calls' own allocations then contend for.

use std::fmt::Write as _;
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
    Decision(Box<DecisionFacts>),
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

/// The facts of one permission decision.
#[derive(Debug, Default)]
pub(crate) struct DecisionFacts {
    pub(crate) time_ms: u64,
    pub(crate) session: String,
    pub(crate) agent: String,
    pub(crate) call_id: String,
    pub(crate) action: String,
    pub(crate) resources: Vec<String>,
    pub(crate) effect: &'static str,
    /// A rule decided: `rule_action`, `rule_resource`, `rule_effect` and `origin` say which.
    pub(crate) ruled: bool,
    pub(crate) rule_action: String,
    pub(crate) rule_resource: String,
    pub(crate) rule_effect: &'static str,
    pub(crate) origin: String,
    pub(crate) reply: Option<&'static str>,
    pub(crate) verdict: &'static str,
}

impl DecisionFacts {
    /// Copies `decision`'s facts into this slot.
    pub(crate) fn fill(&mut self, decision: &Decision) {
        self.time_ms = shape::now_ms();
        copy(&mut self.session, &decision.session_id);
        copy(&mut self.agent, &decision.agent);
        copy(&mut self.call_id, &decision.call_id);
        copy(&mut self.action, &decision.action);
        self.resources.truncate(decision.resources.len());
        for (at, resource) in decision.resources.iter().enumerate() {
            match self.resources.get_mut(at) {
                Some(slot) => copy(slot, resource),
                None => self.resources.push(resource.clone()),
            }
        }
        self.effect = decision.effect.as_str();
        let by = decision.deciding().and_then(|e| e.decided_by.as_ref());
        self.ruled = by.is_some();
        if let Some(by) = by {
            copy(&mut self.rule_action, &by.rule.action);
            copy(&mut self.rule_resource, &by.rule.resource);
            self.rule_effect = by.rule.effect.as_str();
            self.origin.clear();
            let _ = write!(self.origin, "{}", by.origin);
        }
        self.reply = decision.reply_kind();
        self.verdict = decision.verdict.as_str();
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

/// A slot's strings past this capacity are let go when it waits in a pool.
const KEEP: usize = 256;

/// What a slot lets go of before it waits for the next call: no buffer stays large, nothing
/// rare stays allocated.
pub(crate) trait Slot: Default {
    fn shrink(&mut self);
}

/// Emptied slots of one kind, handed back by the writer for the next calls.
pub(crate) struct Pool<T> {
    /// Boxed: a slot moves between the queue and the pool as one pointer.
    free: Mutex<Vec<Box<T>>>,
}

impl<T> Default for Pool<T> {
    fn default() -> Self {
        Self {
            free: Mutex::new(Vec::new()),
        }
    }
}

impl<T: Slot> Pool<T> {
    /// A slot with room, or a new one (while the pool warms up, or when every slot is queued).
    pub(crate) fn take(&self) -> Box<T> {
        self.free
            .lock()
            .ok()
            .and_then(|mut free| free.pop())
            .unwrap_or_default()
    }
}

/// Keeps `slot` in `free` for the next call, unless `max` already wait.
fn keep<T: Slot>(free: &mut Vec<Box<T>>, mut slot: Box<T>, max: usize) {
    if free.len() < max {
        slot.shrink();
        free.push(slot);
    }
}

/// The slots of both kinds of record.
#[derive(Default)]
pub(crate) struct Pools {
    pub(crate) calls: Pool<CallFacts>,
    pub(crate) decisions: Pool<DecisionFacts>,
}

impl Pools {
    /// Gives back the slots of `entries`, keeping at most `max` of each kind. Each pool is
    /// locked once for the whole batch (a caller only ever holds one of them).
    pub(crate) fn give(&self, entries: impl IntoIterator<Item = Entry>, max: usize) {
        let (Ok(mut calls), Ok(mut decisions)) =
            (self.calls.free.lock(), self.decisions.free.lock())
        else {
            return;
        };
        for entry in entries {
            match entry {
                Entry::Call(slot) => keep(&mut calls, slot, max),
                Entry::Decision(slot) => keep(&mut decisions, slot, max),
            }
        }
    }
}

fn shrink_text(text: &mut String) {
    if text.capacity() > KEEP {
        *text = String::new();
    }
}

impl Slot for CallFacts {
    fn shrink(&mut self) {
        for text in [
            &mut self.session,
            &mut self.agent,
            &mut self.call_id,
            &mut self.tool,
            &mut self.settled_as,
        ] {
            shrink_text(text);
        }
        if self.json.capacity() > INLINE_INPUT {
            self.json = Vec::new();
        }
        self.input = Input::Json;
        self.references = Vec::new();
        self.error = None;
    }
}

impl Slot for DecisionFacts {
    fn shrink(&mut self) {
        for text in [
            &mut self.session,
            &mut self.agent,
            &mut self.call_id,
            &mut self.action,
            &mut self.rule_action,
            &mut self.rule_resource,
            &mut self.origin,
        ] {
            shrink_text(text);
        }
        // Most requests name one resource.
        self.resources.truncate(1);
        self.resources.iter_mut().for_each(shrink_text);
    }
}
