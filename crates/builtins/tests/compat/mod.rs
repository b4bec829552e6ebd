//! What models send: the calls that models tuned on Kilo, opencode and Claude Code write
//! (other field spellings, values sent as strings, fields a tool does not have, tool names in
//! another case), settled through a registry as a host does, with what the model reads.

mod agreement;
mod calls;
mod support;
