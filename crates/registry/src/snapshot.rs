//! Snapshots of the effective tools and the settle boundary.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use indexmap::IndexMap;
use tackle_output_store::{Bounded, OutputStore};
use tackle_tool_core::{
    Call, Context, Defect, Definition, Tool, ToolError, ToolOutput, Visibility,
};
use tracing::Instrument as _;

use crate::SettleError;
use crate::changes::CatalogChanges;
use crate::inner::RegistryInner;
use crate::observe::{self, SettleRecord};
use crate::settlement::{Outcome, Settlement};

#[derive(Debug, Clone)]
struct SnapEntry {
    id: u64,
    tool: Tool,
}

/// An immutable snapshot of the tools offered for one model turn, and the only way to execute
/// one of them.
#[derive(Debug)]
pub struct Materialization {
    pub(crate) registry: Arc<RegistryInner>,
    session: Option<String>,
    entries: IndexMap<String, SnapEntry>,
    /// Watching since just before the entries were read: while it stays quiet, every entry is
    /// still the effective registration of its name.
    since: CatalogChanges,
    /// Derived when first asked for: settling a call needs no definition.
    definitions: OnceLock<Vec<Arc<Definition>>>,
}

impl Materialization {
    /// The snapshot of `registry`'s effective tools for `session`, minus those whose
    /// permission action `visibility` wholly disables.
    pub(crate) fn new(
        registry: Arc<RegistryInner>,
        session: Option<&str>,
        visibility: &dyn Visibility,
    ) -> Self {
        let since = CatalogChanges::new(registry.app.subscribe(), registry.changed.subscribe());
        let entries = registry
            .effective(session)
            .into_iter()
            .filter(|(name, entry)| !visibility.wholly_disabled(entry.tool.permission(name)))
            .map(|(name, entry)| {
                let entry = SnapEntry {
                    id: entry.id,
                    tool: entry.tool,
                };
                (name, entry)
            })
            .collect();
        Self {
            registry,
            session: session.map(str::to_owned),
            entries,
            since,
            definitions: OnceLock::new(),
        }
    }

    /// The definitions the model is shown, in catalog order; the same `Arc`s across snapshots
    /// while a registration is unchanged.
    pub fn definitions(&self) -> &[Arc<Definition>] {
        self.definitions.get_or_init(|| {
            self.entries
                .iter()
                // Names were validated at registration, so deriving a definition cannot fail.
                .filter_map(|(name, entry)| entry.tool.definition(name).ok())
                .collect()
        })
    }

    /// True while no registration has changed in any layer this snapshot reads since it was
    /// taken: a host may keep settling calls against it instead of taking a new one.
    pub fn is_current(&self) -> bool {
        self.since.quiet()
    }

    /// True when the snapshot offers `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// This snapshot without the tools `keep` refuses (a catalog for one model: offer
    /// `apply_patch` or `edit`, not both); a call of a dropped name is `Unknown tool`.
    #[must_use]
    pub fn filtered(&self, mut keep: impl FnMut(&str, &Tool) -> bool) -> Materialization {
        Self {
            registry: Arc::clone(&self.registry),
            session: self.session.clone(),
            entries: self
                .entries
                .iter()
                .filter(|(name, entry)| keep(name, &entry.tool))
                .map(|(name, entry)| (name.clone(), entry.clone()))
                .collect(),
            since: self.since.clone(),
            definitions: OnceLock::new(),
        }
    }

    /// The tool a call of `name` settles (see [`settle`](Self::settle)), if any.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.resolve(name).map(|(_, entry)| &entry.tool)
    }

    /// The entry a call's name settles: the exact name, else the one name that equals it
    /// ignoring ASCII case (models trained on other tool sets write `Bash`, `Read`). Two
    /// such names settle neither.
    fn resolve(&self, name: &str) -> Option<(&str, &SnapEntry)> {
        if let Some((name, entry)) = self.entries.get_key_value(name) {
            return Some((name, entry));
        }
        let mut folded = self
            .entries
            .iter()
            .filter(|(registered, _)| registered.eq_ignore_ascii_case(name));
        match (folded.next(), folded.next()) {
            (Some((name, entry)), None) => Some((name, entry)),
            _ => None,
        }
    }

    /// Settles one call against this snapshot.
    ///
    /// - A name the snapshot does not offer: the error result `Unknown tool: <name>`. A name
    ///   that matches exactly one offered name when case is ignored settles that tool, and the
    ///   settlement says so ([`Settlement::settled_as`]).
    /// - A name whose effective registration is no longer the advertised one (shadowed,
    ///   removed or revealed since the snapshot): `Stale tool call: <name>`.
    /// - A [`ToolFailure`](tackle_tool_core::ToolFailure): an error result with its message.
    ///   A halt or a defect: an `Err`.
    /// - A success: bounded by the output store; the settlement carries the references.
    ///
    /// Error results are bounded exactly like a success's text: a message over a limit (a huge
    /// path or pattern echoed back, a failure listing thousands of files) becomes its preview,
    /// and the full message a managed output.
    ///
    /// A managed output that cannot be saved (the store's directory gone bad, the disk full)
    /// loses nothing the preview shows: the preview's marker says the rest could not be saved,
    /// and [`Settlement::unsaved`] carries the store's error. Limits the store cannot work
    /// with, and inline media over its limit, are [`SettleError::Store`].
    /// Every result, success or error, has the store's secret values redacted before it is
    /// measured, shown or saved.
    ///
    /// Once the tool starts, it finishes even if its registration goes away meanwhile.
    ///
    /// Every settle is a `tracing` span named `settle` (tool, call id, session, agent, then
    /// duration, result type, bytes in and out, truncated, the first managed reference), and
    /// the registry's [`SettleObserver`](crate::SettleObserver), if any, is told of it. That
    /// observer is asked first whether the call may run at all
    /// ([`admit`](crate::SettleObserver::admit)); a refused call settles as its error result.
    pub async fn settle(&self, call: &Call, ctx: &Context) -> Result<Settlement, SettleError> {
        let span = observe::span(call, ctx);
        let observer = self.registry.observer.as_deref();
        if span.is_disabled() && observer.is_none() {
            return self.settle_resolved(call, ctx).await;
        }
        let started = Instant::now();
        let refused = observer.and_then(|observer| observer.admit(call, ctx).err());
        let outcome = match refused {
            Some(message) => {
                settle_error(&self.registry.store, ctx, call, message)
                    .instrument(span.clone())
                    .await
            }
            None => {
                self.settle_resolved(call, ctx)
                    .instrument(span.clone())
                    .await
            }
        };
        let resolved = self.resolve(&call.name);
        let record = SettleRecord {
            call,
            context: ctx,
            tool: resolved.map(|(name, _)| name),
            action: resolved.map(|(name, entry)| entry.tool.permission(name)),
            duration: started.elapsed(),
            outcome: outcome.as_ref(),
        };
        observe::record_on(&span, &record);
        if let Some(observer) = observer {
            observer.settled(&record);
        }
        outcome
    }

    async fn settle_resolved(&self, call: &Call, ctx: &Context) -> Result<Settlement, SettleError> {
        let store = &self.registry.store;
        let Some((name, entry)) = self.resolve(&call.name) else {
            let message = format!("Unknown tool: {}", call.name);
            return settle_error(store, ctx, call, message).await;
        };
        let mut settlement = self.settle_entry(name, entry, call, ctx).await?;
        if name != call.name {
            settlement.settled_as = Some(name.to_owned());
        }
        Ok(settlement)
    }

    async fn settle_entry(
        &self,
        name: &str,
        entry: &SnapEntry,
        call: &Call,
        ctx: &Context,
    ) -> Result<Settlement, SettleError> {
        let store = &self.registry.store;
        // A change is signalled after it is made, so a quiet signal means no registration has
        // changed since this snapshot was read; only otherwise is the name looked up again.
        if !self.is_current()
            && self.registry.current(self.session.as_deref(), name) != Some(entry.id)
        {
            let message = format!("Stale tool call: {}", call.name);
            return settle_error(store, ctx, call, message).await;
        }
        // The tool sees the call's own id and the store's budget, whatever the host put in the
        // context: a leaf that shapes its own output sizes it for what this settle keeps.
        let budget = store.config().budget();
        // Boxed: the future of every settle would otherwise carry room for a whole context.
        let owned: Box<Context>;
        let ctx = if ctx.tool_call_id == call.id && ctx.budget == budget {
            ctx
        } else {
            owned = Box::new({
                let mut own = ctx.for_call(call.id.clone());
                own.budget = budget;
                own
            });
            &owned
        };
        let mut output = match entry.tool.run_unbounded(call, ctx).await {
            Ok(output) => output,
            Err(ToolError::Failure(failure)) => {
                return settle_error(store, ctx, call, failure.message).await;
            }
            Err(ToolError::Halt(halt)) => return Err(halt.into()),
            Err(ToolError::Defect(defect)) => return Err(defect.into()),
        };
        // Secrets first: what is measured, shown and saved is the redacted output.
        store.redact(&mut output);
        if !store.needs_spill(&output)? {
            // Within every limit: the output is the result as it is.
            return Ok(Settlement {
                outcome: Outcome::Output(output),
                references: Vec::new(),
                truncated: false,
                omitted_lines: 0,
                omitted_bytes: 0,
                unsaved: None,
                settled_as: None,
            });
        }
        // Spilling writes up to the spill cap and may sweep the directory: blocking work for
        // the blocking pool. Boxed, so the common path's future stays small.
        let bounded = Box::pin(spill(store, ctx, call, output)).await?;
        Ok(Settlement {
            outcome: Outcome::Output(bounded.output),
            references: bounded.references,
            truncated: bounded.truncated,
            omitted_lines: bounded.omitted_lines,
            omitted_bytes: bounded.omitted_bytes,
            unsaved: bounded.unsaved,
            settled_as: None,
        })
    }
}

/// The error result for `message`, bounded like a success's text.
async fn settle_error(
    store: &OutputStore,
    ctx: &Context,
    call: &Call,
    mut message: String,
) -> Result<Settlement, SettleError> {
    store.redact_text(&mut message);
    if store.text_fits(&message) {
        return Ok(Settlement::error(message));
    }
    let bounded = Box::pin(on_blocking_pool(
        store,
        ctx,
        call,
        move |store, session, id| store.bound_bytes(session, id, message.into_bytes()),
    ))
    .await?;
    Ok(Settlement {
        outcome: Outcome::Error(bounded.text),
        references: bounded.reference.into_iter().collect(),
        truncated: bounded.truncated,
        omitted_lines: bounded.omitted_lines,
        omitted_bytes: bounded.omitted_bytes,
        unsaved: bounded.unsaved,
        settled_as: None,
    })
}

/// Bounds `output`, which needs a managed output, on the blocking pool.
async fn spill(
    store: &OutputStore,
    ctx: &Context,
    call: &Call,
    output: ToolOutput,
) -> Result<Bounded, SettleError> {
    on_blocking_pool(store, ctx, call, move |store, session, id| {
        store.bound(session, id, output)
    })
    .await
}

/// Runs one bounding step (file work: it writes a managed output and may sweep the directory)
/// on the blocking pool.
async fn on_blocking_pool<T: Send + 'static>(
    store: &OutputStore,
    ctx: &Context,
    call: &Call,
    work: impl FnOnce(&OutputStore, &str, &str) -> Result<T, tackle_output_store::StoreError>
    + Send
    + 'static,
) -> Result<T, SettleError> {
    let (store, session, id) = (store.clone(), ctx.session_id.clone(), call.id.clone());
    match tokio::task::spawn_blocking(move || work(&store, &session, &id)).await {
        Ok(bounded) => Ok(bounded?),
        Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
        Err(join) => Err(SettleError::Defect(Defect::new(format!(
            "bounding the output of {} did not finish: {join}",
            call.name
        )))),
    }
}
