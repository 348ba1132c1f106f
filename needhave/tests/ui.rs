//! Every mistake a contributor can make in the `routes!` table is a compile
//! error that points at the offending token.
//!
//! Each `tests/ui/NN-*.rs` is one mistake and its `.stderr` is what the
//! contributor sees; `tests/ui/support/` is what the fixtures' tables refer to.
//! Regenerate with `TRYBUILD=overwrite cargo test -p needhave --test ui`, then
//! read every changed `.stderr`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
