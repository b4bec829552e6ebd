//! Which rules can match an action, precomputed so that evaluation looks only at those.
//!
//! Most rules name one action literally (`bash`, `read`). For every literal action in the
//! ruleset the index keeps, in rule order, every rule whose action pattern matches it (the
//! literal ones and the wildcard ones); an action named by no rule can only be matched by the
//! wildcard rules, kept in a second list. Evaluation then checks the resource pattern of the
//! candidates only.

use std::collections::HashMap;

use crate::wildcard::{Pattern, literal_key};

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ActionIndex {
    /// Normalised literal action -> indices of the rules matching it, ascending.
    literal: HashMap<String, Vec<usize>>,
    /// Indices of the rules whose action pattern has a wildcard, ascending.
    wild: Vec<usize>,
}

/// The candidate rules for one action.
pub(crate) enum Candidates<'a> {
    /// Every rule listed matches the action.
    Matching(&'a [usize]),
    /// The action pattern of each listed rule must still be checked.
    Unchecked(&'a [usize]),
}

impl ActionIndex {
    /// Records rule `index`, whose action pattern is `raw` as written; `action_of(i)` is the
    /// compiled action pattern of rule `i` (for every `i <= index`).
    pub(crate) fn push<'p>(
        &mut self,
        index: usize,
        raw: &str,
        action_of: impl Fn(usize) -> &'p Pattern,
    ) {
        match literal_key(raw) {
            Some(key) => {
                let wild = &self.wild;
                self.literal
                    .entry(key)
                    .or_insert_with_key(|key| {
                        wild.iter()
                            .copied()
                            .filter(|&i| action_of(i).matches_normalised(key))
                            .collect()
                    })
                    .push(index);
            }
            None => {
                let pattern = action_of(index);
                for (key, list) in &mut self.literal {
                    if pattern.matches_normalised(key) {
                        list.push(index);
                    }
                }
                self.wild.push(index);
            }
        }
    }

    /// The candidates for the normalised `action`.
    pub(crate) fn candidates(&self, action: &str) -> Candidates<'_> {
        match self.literal.get(action) {
            Some(list) => Candidates::Matching(list),
            None => Candidates::Unchecked(&self.wild),
        }
    }
}
