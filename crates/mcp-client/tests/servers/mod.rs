//! Consuming real servers. The npm servers and the Python SDK come from
//! `.ci/mcp-clients.sh` (target/mcp-node, target/mcp-venv); a missing one fails the test
//! with the instruction to run it.

mod bad;
mod everything;
mod filesystem;
mod http;
mod python;
mod support;
