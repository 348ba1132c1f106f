//! `routes!`: Needhave's one table of calls.
//!
//! A contributor describes a call once — method, path, body type, statuses,
//! error codes, the MCP tools it backs and what it does in a sentence — and
//! this macro derives everything else from that line: the HTTP dispatcher,
//! the `ROUTES` list that tests enumerate, the OpenAPI operations and the MCP
//! tool table. There is no second list anywhere to forget to update.
//!
//! The crate reads as parse (`ast.rs`) → check (`check.rs`, every mistake as a
//! spanned error) → expand (`expand/`). What only rustc can judge (a handler
//! that does not fit its line, an error code that is not a `Code` variant) is
//! left to rustc, with the expansion spanned so that its error lands on the
//! offending token of the table too.
//!
//! Every mistake has a compile-fail fixture in `needhave/tests/ui/` (trybuild,
//! run by `cargo test -p needhave --test ui`): the fixtures live in the one
//! crate that provides the `crate::table`, `crate::http`, … paths the
//! expansion names.

mod ast;
mod check;
mod expand;

use proc_macro::TokenStream;

/// See the table in `needhave/src/routes.rs` for the grammar in use.
#[proc_macro]
pub fn routes(input: TokenStream) -> TokenStream {
    let table = syn::parse_macro_input!(input as ast::Table);
    match check::check(&table) {
        Ok(()) => expand::expand(&table).into(),
        Err(e) => e.to_compile_error().into(),
    }
}
