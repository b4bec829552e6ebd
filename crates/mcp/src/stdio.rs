//! The stdio transport's two ends.
//!
//! tokio's `stdin()` and `stdout()` hand every read and write to a blocking-pool thread, so each
//! call paid two thread switches before any tool ran. An MCP client starts its server with pipes
//! on stdin and stdout, and a pipe can be driven by the runtime itself, non-blocking: the request
//! is read and the answer written on the thread that serves them. Anything else (a file, a
//! terminal, a socket) keeps tokio's blocking ends, which work for every kind of descriptor.
//!
//! Setting a pipe non-blocking changes the open pipe end this process shares with anything that
//! inherited it; the commands tackle runs get their own stdin (`/dev/null`) and their own output
//! pipes, so none of them reads or writes these ends.

use std::os::fd::AsFd;
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// The end requests are read from.
pub(crate) type Input = Pin<Box<dyn AsyncRead + Send>>;
/// The end answers are written to.
pub(crate) type Output = Pin<Box<dyn AsyncWrite + Send>>;

/// stdin and stdout, each as a runtime-driven pipe when it is one.
pub(crate) fn ends() -> (Input, Output) {
    let input: Input = match std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Receiver::from_owned_fd)
    {
        Ok(pipe) => Box::pin(pipe),
        Err(_) => Box::pin(tokio::io::stdin()),
    };
    let output: Output = match std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Sender::from_owned_fd)
    {
        Ok(pipe) => Box::pin(pipe),
        Err(_) => Box::pin(tokio::io::stdout()),
    };
    (input, output)
}
