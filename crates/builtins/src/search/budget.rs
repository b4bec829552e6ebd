//! The wall-clock budget of one search (out of time: partial results, not an error).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::steps::Steps;

/// The default wall-clock budget of a glob or grep call.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(20);

/// When a search must stop: its deadline passed or its call was cancelled. Checked by every
/// walker thread between entries and by grep between matches; once spent it stays spent.
/// It also carries the search's step progress, which every walker thread counts into.
#[derive(Debug)]
pub(crate) struct Budget {
    deadline: Instant,
    cancel: Option<CancellationToken>,
    spent: AtomicBool,
    steps: Option<Steps>,
}

impl Budget {
    /// A budget of `limit` from now, also spent when `cancel` fires.
    pub(crate) fn new(limit: Duration, cancel: Option<CancellationToken>) -> Self {
        let now = Instant::now();
        Self {
            deadline: now.checked_add(limit).unwrap_or(now + DEFAULT_BUDGET),
            cancel,
            spent: AtomicBool::new(false),
            steps: None,
        }
    }

    /// The same budget, counting the search's progress into `steps` (none: nobody watches).
    pub(crate) fn with_steps(mut self, steps: Option<Steps>) -> Self {
        self.steps = steps;
        self
    }

    /// The search's step progress, when the call has a progress sink.
    pub(crate) fn steps(&self) -> Option<&Steps> {
        self.steps.as_ref()
    }

    /// True once the search must stop.
    pub(crate) fn spent(&self) -> bool {
        if self.spent.load(Ordering::Relaxed) {
            return true;
        }
        let over = Instant::now() >= self.deadline
            || self
                .cancel
                .as_ref()
                .is_some_and(CancellationToken::is_cancelled);
        if over {
            self.spent.store(true, Ordering::Relaxed);
        }
        over
    }

    /// True when a check found the budget spent (the results are then partial).
    pub(crate) fn was_spent(&self) -> bool {
        self.spent.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_budget_is_spent_and_stays_spent() {
        let budget = Budget::new(Duration::ZERO, None);
        assert!(!budget.was_spent());
        assert!(budget.spent());
        assert!(budget.was_spent());
    }

    #[test]
    fn cancellation_spends_the_budget() {
        let token = CancellationToken::new();
        let budget = Budget::new(Duration::from_secs(60), Some(token.clone()));
        assert!(!budget.spent());
        token.cancel();
        assert!(budget.spent());
    }
}
