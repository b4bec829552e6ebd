//! The one way this crate waits for blocking work (file I/O, searches, HTML conversion, the
//! bash supervisor): [`blocking`] runs a closure on tokio's blocking pool.
//!
//! Policy, the same at every site:
//! - A panic inside the work is resumed on the task that awaits it, exactly as if the work had
//!   run inline. A panic is a bug; whether it aborts the call, the host's task or a test is
//!   decided where inline code panics too, never differently per leaf.
//! - A job that ends without a value any other way (tokio drops queued blocking jobs when the
//!   runtime shuts down) is [`Stopped`]; a leaf reports it as a [`ToolError::Defect`].
//! - The job starts when [`blocking`] is called, not when the future is first polled, and runs
//!   to completion even if that future is dropped (tokio cannot stop a blocking thread): work
//!   that must finish, such as an atomic write holding a file's lock, finishes.

use std::future::Future;

use tackle_tool_core::{Defect, ToolError};

/// The blocking job ended without a value and without a panic (the runtime is shutting down).
#[derive(Debug, thiserror::Error)]
#[error("the blocking job was stopped before it finished: {0}")]
pub(crate) struct Stopped(String);

impl From<Stopped> for ToolError {
    fn from(stopped: Stopped) -> Self {
        Defect::with_source("blocking work did not finish", stopped).into()
    }
}

/// Starts `work` on the blocking pool now; the future yields its value (see the module's
/// panic policy).
pub(crate) fn blocking<T, F>(work: F) -> impl Future<Output = Result<T, Stopped>> + Send + 'static
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let job = tokio::task::spawn_blocking(work);
    async move {
        match job.await {
            Ok(value) => Ok(value),
            Err(join) => match join.try_into_panic() {
                Ok(payload) => std::panic::resume_unwind(payload),
                Err(join) => Err(Stopped(join.to_string())),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn returns_the_value() {
        assert_eq!(blocking(|| 7).await.ok(), Some(7));
    }

    #[tokio::test]
    async fn a_panic_is_resumed_on_the_awaiting_task() {
        let awaiting = tokio::spawn(async { blocking(|| panic!("boom")).await });
        let err = awaiting
            .await
            .expect_err("the panic reaches the awaiting task");
        assert!(err.is_panic());
        let payload = err.into_panic();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
    }

    #[tokio::test]
    async fn the_job_runs_to_completion_when_its_future_is_dropped() {
        let (sender, receiver) = std::sync::mpsc::channel();
        drop(blocking(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            sender.send(()).ok();
        }));
        let done = tokio::task::spawn_blocking(move || receiver.recv().is_ok()).await;
        assert!(matches!(done, Ok(true)));
    }

    #[test]
    fn stopped_is_a_defect() {
        let err = ToolError::from(Stopped("cancelled".to_owned()));
        assert!(matches!(err, ToolError::Defect(_)));
    }
}
