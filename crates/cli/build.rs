//! Links the `tackle` binary as a position-dependent executable on Linux.
//!
//! A one-shot `tackle call` is how other agents use tackle, so its start-up is on their path.
//! A position-independent executable of this size has tens of thousands of relocations for the
//! dynamic loader to apply, touching about 200 pages before `main`; linked at a fixed address
//! the linker applies them once. The library crates are unaffected (their code stays
//! position-independent).

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
