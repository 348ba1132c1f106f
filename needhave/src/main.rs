//! The `needhave` binary; see `native/cli.rs`. On wasm32 the crate is the
//! Worker library and this binary is empty.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    needhave::native::cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}
