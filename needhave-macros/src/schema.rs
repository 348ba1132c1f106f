//! `#[schema]`: a type the native build describes by a JSON Schema (the
//! OpenAPI document, the MCP tools' schemas) and the Worker does not.
//!
//! The schemas are written at build time by the native binary only; on the
//! Worker a `JsonSchema` impl would be code that nothing calls. Saying so on
//! each type took a `cfg_attr` for the derive and one more for each of its
//! `schemars` (and, where serde is derived natively only, `serde`)
//! attributes. This attribute says it once: it adds the derive natively and
//! puts each such helper attribute under the same condition, so the type
//! reads as if schemars were always there.
//!
//! `#[schema(serialize)]` also derives `serde::Serialize` natively, for
//! answers the Worker writes with `ToJson` and the native build checks
//! against serde.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Fields};

/// The derives that read `#[serde(...)]` on every target: where one of them
/// is on the item, its serde attributes stay unconditional.
const SERDE_READERS: &[&str] = &["ToJson", "Serialize", "Deserialize"];

pub fn expand(args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let serialize = parse_args(args)?;
    let mut input: DeriveInput = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            "`#[schema]` goes on a struct or an enum (the types a schema describes)",
        )
    })?;
    let derived = derived(&input.attrs)?;
    if serialize && derived.iter().any(|d| d == "Serialize") {
        return Err(syn::Error::new(
            input.ident.span(),
            "`Serialize` is derived on every target already: write `#[schema]`, \
             not `#[schema(serialize)]`",
        ));
    }
    if let Some(d) = derived.iter().find(|d| *d == "JsonSchema") {
        return Err(syn::Error::new(
            input.ident.span(),
            format!("`#[schema]` derives `{d}` natively: remove it from `#[derive]`"),
        ));
    }
    // A derive of the item that reads `serde` (`ToJson` on the Worker too)
    // keeps the attributes on every target; only where serde is this
    // attribute's native `Serialize` alone do they go native-only with it.
    let serde_everywhere = derived.iter().any(|d| SERDE_READERS.contains(&d.as_str()));
    let mut helpers = vec!["schemars"];
    if !serde_everywhere {
        helpers.push("serde");
    }
    native_only(&mut input.attrs, &helpers);
    match &mut input.data {
        Data::Struct(s) => fields(&mut s.fields, &helpers),
        Data::Enum(e) => {
            for v in &mut e.variants {
                native_only(&mut v.attrs, &helpers);
                fields(&mut v.fields, &helpers);
            }
        }
        Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span(),
                "`#[schema]` goes on a struct or an enum, not a union",
            ))
        }
    }
    let derive = if serialize {
        quote!(#[cfg_attr(not(target_arch = "wasm32"), derive(::serde::Serialize, ::schemars::JsonSchema))])
    } else {
        quote!(#[cfg_attr(not(target_arch = "wasm32"), derive(::schemars::JsonSchema))])
    };
    Ok(quote! {
        #derive
        #input
    })
}

/// `serialize`, or nothing.
fn parse_args(args: TokenStream) -> syn::Result<bool> {
    if args.is_empty() {
        return Ok(false);
    }
    let ident: syn::Ident = syn::parse2(args.clone()).map_err(|_| {
        syn::Error::new(
            args.span(),
            "`#[schema]` takes nothing or `serialize`: `#[schema(serialize)]`",
        )
    })?;
    if ident == "serialize" {
        Ok(true)
    } else {
        Err(syn::Error::new(
            ident.span(),
            format!("unknown `#[schema({ident})]`: `#[schema]` takes nothing or `serialize`"),
        ))
    }
}

/// The last path segment of every derive on the item.
fn derived(attrs: &[Attribute]) -> syn::Result<Vec<String>> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        attr.parse_nested_meta(|meta| {
            if let Some(last) = meta.path.segments.last() {
                out.push(last.ident.to_string());
            }
            Ok(())
        })?;
    }
    Ok(out)
}

fn fields(fields: &mut Fields, helpers: &[&str]) {
    for f in fields.iter_mut() {
        native_only(&mut f.attrs, helpers);
    }
}

/// `#[name(args)]` becomes `#[cfg_attr(not(target_arch = "wasm32"),
/// name(args))]` for each helper attribute named.
fn native_only(attrs: &mut [Attribute], helpers: &[&str]) {
    for attr in attrs.iter_mut() {
        if !helpers.iter().any(|h| attr.path().is_ident(h)) {
            continue;
        }
        if let syn::Meta::List(list) = &attr.meta {
            let (path, tokens) = (&list.path, &list.tokens);
            attr.meta = syn::parse_quote!(cfg_attr(not(target_arch = "wasm32"), #path(#tokens)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(args: TokenStream, item: TokenStream) -> String {
        expand(args, item).unwrap().to_string()
    }

    /// `ToJson` reads `skip_serializing_if` on the Worker too: the attribute
    /// must stay on every target, with or without `serialize`.
    #[test]
    fn serde_attributes_stay_where_a_derive_reads_them_everywhere() {
        for args in [quote!(), quote!(serialize)] {
            let out = expanded(
                args,
                quote! {
                    #[derive(ToJson)]
                    pub struct Callback {
                        #[serde(skip_serializing_if = "Option::is_none")]
                        #[schemars(with = "String")]
                        pub thread_key: Option<String>,
                    }
                },
            );
            let everywhere = quote!(#[serde(skip_serializing_if = "Option::is_none")]).to_string();
            assert!(out.contains(&everywhere), "{out}");
            let native =
                quote!(#[cfg_attr(not(target_arch = "wasm32"), schemars(with = "String"))])
                    .to_string();
            assert!(out.contains(&native), "{out}");
        }
    }

    /// Where serde is only the native `Serialize` this attribute adds, its
    /// attributes go native-only with it.
    #[test]
    fn serde_attributes_follow_a_native_only_serialize() {
        let out = expanded(
            quote!(serialize),
            quote! {
                #[derive(Clone, Copy)]
                #[serde(rename_all = "lowercase")]
                pub enum Kind { Need, Have }
            },
        );
        let native =
            quote!(#[cfg_attr(not(target_arch = "wasm32"), serde(rename_all = "lowercase"))])
                .to_string();
        assert!(out.contains(&native), "{out}");
    }
}
