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
//! Beside it, the derives of the bodies and answers (`FromBody`, `ToJson`,
//! `derive.rs`) and `#[schema]` (`schema.rs`), which gives a type its JSON
//! Schema in the native build only.
//!
//! Every mistake has a compile-fail fixture in `needhave/tests/ui/` (trybuild,
//! run by `cargo test -p needhave --test ui`): the fixtures live in the one
//! crate that provides the `crate::api`, `crate::http`, … paths the
//! expansion names.

mod ast;
mod check;
mod derive;
mod expand;
mod schema;

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

/// A request body read from its JSON object field by field: see `derive.rs`.
#[proc_macro_derive(FromBody)]
pub fn derive_from_body(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    derive::from_body(&input)
        .unwrap_or_else(|e| e.to_compile_error())
        .into()
}

/// An answer written as JSON field by field, as serde_json writes it: see
/// `derive.rs`. `serde` is a helper attribute so that the answer types'
/// `#[serde(skip_serializing_if)]` stands where serde is not derived (the
/// Worker).
#[proc_macro_derive(ToJson, attributes(serde))]
pub fn derive_to_json(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    derive::to_json(&input)
        .unwrap_or_else(|e| e.to_compile_error())
        .into()
}

/// A type described by a JSON Schema in the native build only: see
/// `schema.rs`. `#[schema(serialize)]` derives `serde::Serialize` natively
/// too. Put it above the item's `#[derive]`.
#[proc_macro_attribute]
pub fn schema(args: TokenStream, item: TokenStream) -> TokenStream {
    schema::expand(args.into(), item.into())
        .unwrap_or_else(|e| e.to_compile_error())
        .into()
}
