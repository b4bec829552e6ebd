//! Model-based property test: random register/drop/materialize/settle sequences across the
//! application, Location and Session layers against a simple reference model.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use tackle_registry::{Materialization, Registration};
use tackle_tool_core::{ResultValue, ShowAll};

use crate::support::*;

const NAMES: [&str; 3] = ["a", "b", "c"];
const SESSIONS: [&str; 2] = ["s0", "s1"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    App,
    Location,
    Session(usize),
}

#[derive(Debug, Clone)]
enum Op {
    Register(Layer, BTreeSet<usize>),
    Drop(usize),
    Materialize(Option<usize>),
    Settle(usize, usize),
}

fn layer() -> impl Strategy<Value = Layer> {
    prop_oneof![
        Just(Layer::App),
        Just(Layer::Location),
        (0..SESSIONS.len()).prop_map(Layer::Session)
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (layer(), proptest::collection::btree_set(0..NAMES.len(), 1..=NAMES.len())).prop_map(|(l, n)| Op::Register(l, n)),
        2 => (0..8usize).prop_map(Op::Drop),
        2 => proptest::option::of(0..SESSIONS.len()).prop_map(Op::Materialize),
        4 => (0..8usize, 0..NAMES.len()).prop_map(|(s, n)| Op::Settle(s, n)),
    ]
}

struct Batch {
    id: usize,
    layer: Layer,
    names: BTreeSet<usize>,
    live: bool,
}

/// The reference model: which batch a call of `name` runs now, seen from `session`.
fn effective(batches: &[Batch], name: usize, session: Option<usize>) -> Option<usize> {
    let newest = |layer: Layer| {
        batches
            .iter()
            .rev()
            .find(|b| b.live && b.layer == layer && b.names.contains(&name))
            .map(|b| b.id)
    };
    session
        .and_then(|s| newest(Layer::Session(s)))
        .or_else(|| newest(Layer::Location))
        .or_else(|| newest(Layer::App))
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let fx = Fixture::new();
    let mut batches: Vec<Batch> = Vec::new();
    let mut guards: Vec<(usize, Registration)> = Vec::new();
    let mut snapshots: Vec<(Materialization, Option<usize>, BTreeMap<usize, usize>)> = Vec::new();
    for op in ops {
        match op {
            Op::Register(layer, names) => {
                let id = batches.len();
                let tag = format!("{id}:");
                let batch: Vec<_> = names
                    .iter()
                    .map(|&n| (NAMES[n].to_owned(), echo(&tag)))
                    .collect();
                let guard = match layer {
                    Layer::App => fx.app.register(batch),
                    Layer::Location => fx.registry.tools().register(batch),
                    Layer::Session(s) => fx.registry.session_tools(SESSIONS[s]).register(batch),
                }
                .unwrap();
                batches.push(Batch {
                    id,
                    layer,
                    names,
                    live: true,
                });
                guards.push((id, guard));
            }
            Op::Drop(i) if !guards.is_empty() => {
                let (id, guard) = guards.remove(i % guards.len());
                drop(guard);
                batches[id].live = false;
            }
            Op::Drop(_) => {}
            Op::Materialize(session) => {
                let snapshot = match session {
                    None => fx.registry.materialize(&ShowAll),
                    Some(s) => fx.registry.materialize_session(SESSIONS[s], &ShowAll),
                };
                let advertised: BTreeMap<usize, usize> = (0..NAMES.len())
                    .filter_map(|n| effective(&batches, n, session).map(|b| (n, b)))
                    .collect();
                let offered: BTreeSet<String> = names(&snapshot).into_iter().collect();
                let expected: BTreeSet<String> =
                    advertised.keys().map(|&n| NAMES[n].to_owned()).collect();
                prop_assert_eq!(offered, expected);
                snapshots.push((snapshot, session, advertised));
            }
            Op::Settle(_, _) if snapshots.is_empty() => {}
            Op::Settle(s, n) => {
                let (snapshot, session, advertised) = &snapshots[s % snapshots.len()];
                let got = rt.block_on(settle_echo(snapshot, NAMES[n]));
                let expected = match advertised.get(&n) {
                    None => ResultValue::Error(format!("Unknown tool: {}", NAMES[n])),
                    Some(&b) if effective(&batches, n, *session) != Some(b) => {
                        ResultValue::Error(format!("Stale tool call: {}", NAMES[n]))
                    }
                    Some(&b) => ResultValue::Text(format!("{b}:echo")),
                };
                prop_assert_eq!(got, expected);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn registry_matches_the_model(ops in proptest::collection::vec(op(), 1..40)) {
        run(ops)?;
    }
}
