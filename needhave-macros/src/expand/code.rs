//! Error codes as the table writes them and as `crate::error::Code`
//! names them: shared by the files that expand routes.

/// `empty_note` → `EmptyNote`: the variant of `crate::error::Code`.
///
/// Spanned at the code in the table, so that rustc's "no variant" error
/// points at it (its "similar name" hint then shows the CamelCase variant,
/// and `check.rs` says how that is spelled in the table).
pub fn variant(code: &syn::Ident) -> syn::Ident {
    let camel: String = code
        .to_string()
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect();
    syn::Ident::new(&camel, code.span())
}

/// The `crate::error::Code` variant a query parameter refuses with (checked:
/// every parameter names one).
pub fn of_query(q: &crate::ast::QueryParam) -> syn::Ident {
    variant(
        q.error
            .as_ref()
            .expect("checked: every parameter has a code"),
    )
}
