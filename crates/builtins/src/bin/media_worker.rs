//! A media worker for tackle-builtins' own tests and for embedders that want one without the
//! `tackle` binary: serves one decode on stdin and stdout
//! ([`tackle_builtins::read::media_worker_main`]).

fn main() -> std::process::ExitCode {
    tackle_builtins::read::media_worker_main()
}
