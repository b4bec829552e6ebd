//! Settling the calls of one model turn together.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use tackle_tool_core::{Call, Context};

use crate::{Materialization, SettleError, Settlement};

/// What one call of a batch settled to.
type Settled = Result<Settlement, SettleError>;

impl Materialization {
    /// Settles the calls a model made in one turn and returns their results in call order.
    ///
    /// Calls of tools that declare themselves read-only ([`ToolClass`]) run side by side; a
    /// call of any other tool (the default) waits for every call before it and runs alone, so
    /// a read before an edit sees the old content and a read after it the new one, whatever
    /// the timing. The order holds across batches on the same Location: mutating calls of two
    /// sessions' batches never overlap either (calls settled one at a time with
    /// [`settle`](Self::settle) take no part in it). A name the snapshot does not offer settles
    /// to its error result at once.
    ///
    /// When a call halts (declined, dismissed, cancelled), the calls after it are not run:
    /// their results are [`SettleError::NotRun`]; calls running beside it finish.
    ///
    /// [`ToolClass`]: tackle_tool_core::ToolClass
    pub async fn settle_batch(&self, calls: &[Call], ctx: &Context) -> Vec<Settled> {
        let mut results: Vec<Settled> = Vec::with_capacity(calls.len());
        let mut start = 0;
        while start < calls.len() {
            let read_only = self.runs_beside_others(&calls[start]);
            let end = if read_only {
                start
                    + calls[start..]
                        .iter()
                        .take_while(|call| self.runs_beside_others(call))
                        .count()
            } else {
                start + 1
            };
            let group = &calls[start..end];
            if results.iter().any(halted) {
                results.extend(group.iter().map(|_| Err(SettleError::NotRun)));
            } else if read_only {
                let _shared = self.registry.order.read().await;
                let settles = group
                    .iter()
                    .map(|call| Box::pin(self.settle(call, ctx)))
                    .collect();
                results.extend(join_all(settles).await);
            } else {
                let _alone = self.registry.order.write().await;
                results.push(Box::pin(self.settle(&calls[start], ctx)).await);
            }
            start = end;
        }
        results
    }

    /// True when `call` may run beside other calls: its tool is read-only, or it names no
    /// tool and settles to an error without running anything.
    fn runs_beside_others(&self, call: &Call) -> bool {
        self.tool(&call.name)
            .is_none_or(|tool| tool.class().is_read_only())
    }
}

fn halted(result: &Settled) -> bool {
    matches!(result, Err(SettleError::Halt(_) | SettleError::NotRun))
}

/// Polls every future on this task until all are done; outputs in the futures' order.
async fn join_all<F: Future + Unpin>(mut futures: Vec<F>) -> Vec<F::Output> {
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match Pin::new(future).poll(cx) {
                    Poll::Ready(value) => *output = Some(value),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}
