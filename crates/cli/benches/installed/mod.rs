//! Which `tackle` binary a bench runs.

use std::path::PathBuf;

/// The binary as users install it, which `cargo xtask bench` builds the way `cargo xtask
/// install` does and names in `TACKLE_BENCH_BINARY`; else (a bare `cargo bench`) the one cargo
/// built for this bench, said on stderr because it starts slower than the installed one.
pub(crate) fn tackle() -> PathBuf {
    match std::env::var_os("TACKLE_BENCH_BINARY") {
        Some(binary) => {
            eprintln!(
                "bench: timing the installed build of tackle ({})",
                PathBuf::from(&binary).display()
            );
            binary.into()
        }
        None => {
            eprintln!(
                "bench: TACKLE_BENCH_BINARY is unset; timing cargo's bench build of tackle, not \
                 the installed one (run the bench with `cargo xtask bench`)"
            );
            PathBuf::from(env!("CARGO_BIN_EXE_tackle"))
        }
    }
}
