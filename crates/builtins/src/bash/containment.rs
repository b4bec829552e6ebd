//! How a background job is made to die with the host process: the choice a
//! [`JobStore`](super::JobStore) is made with, carried down to where the job's processes
//! start ([`namespace`](super::namespace), [`guardian`](super::guardian)).

/// How a store makes its jobs' processes die with the host process, even when the host is
/// killed (`SIGKILL`) and cannot end them itself. Linux only; elsewhere jobs end only with a
/// live host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum JobContainment {
    /// Each job runs in a PID namespace of its own (with a user namespace when the host
    /// lacks the privilege for a PID namespace alone), which the kernel empties when the host
    /// dies; where this system cannot make one, as [`Guardian`](Self::Guardian).
    #[default]
    Namespace,
    /// No namespace: a guardian process per job kills the processes it finds of the job
    /// (by its marker variable, process group, session and descendants) when the host dies,
    /// and the job's shell gets a parent death signal. For jobs that need what a user
    /// namespace withholds, such as `sudo`; a process that hides from all of these survives.
    Guardian,
}
