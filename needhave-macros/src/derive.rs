//! `#[derive(FromBody)]` and `#[derive(ToJson)]`: the list's request bodies
//! and answers, read and written field by field.
//!
//! Why not serde: a serde `Deserialize` or `Serialize` per type is one
//! monomorphization of serde's visitor machinery per body and per answer,
//! all of it inlined into the dispatcher the Worker ships. The list's bodies
//! are flat objects of strings, and its answers objects of strings, bools
//! and lists, so what each type needs is a line per field over two shared
//! traits in `crate::json` (`BodyField`, `ToJson`); the reading and the
//! escaping themselves are written once there.
//!
//! What each saves the Worker, measured with bench/worker-size.sh against
//! serde's derives on the same types (gzip -9 of the .wasm):
//!
//! - `FromBody`: 13,133 B. serde's `Deserialize`, even from the parsed
//!   object, builds its error messages (`invalid type: floating point
//!   `1.5`, expected a string`), which link core's float printing.
//! - `ToJson`: 636 B, under the 5 KB a hand-written replacement must save;
//!   it stays because serde's `Serialize` (and `serde_json::to_writer`)
//!   puts the Worker over its size gate, 1.75x the yardstick: 125,067 B
//!   against a budget of 124,582 B. Where the gate has room, serde's
//!   `Serialize` is what the answers should derive.
//!
//! The answer types keep `serde::Serialize` natively (schemars reads the same
//! `#[serde]` attributes for the OpenAPI document), so `ToJson` honours the
//! one serde attribute the list uses, `skip_serializing_if =
//! "Option::is_none"`, and refuses any other, rather than writing something
//! serde would write otherwise. Tests compare both writers' bytes.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, LitStr};

/// The named fields of a struct, or the error to show.
fn named_fields(input: &DeriveInput, what: &str) -> syn::Result<Vec<syn::Field>> {
    match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(f) => Ok(f.named.iter().cloned().collect()),
            _ => Err(syn::Error::new(
                input.ident.span(),
                format!("{what} is derived for structs with named fields only"),
            )),
        },
        _ => Err(syn::Error::new(
            input.ident.span(),
            format!("{what} is derived for structs with named fields only"),
        )),
    }
}

/// Whether `field` is marked `#[serde(skip_serializing_if = "Option::is_none")]`;
/// any other serde attribute is an error (`what` would not honour it).
fn skips_none(field: &syn::Field, what: &str) -> syn::Result<bool> {
    let mut skip = false;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("skip_serializing_if") {
                let f: LitStr = meta.value()?.parse()?;
                if f.value() == "Option::is_none" {
                    skip = true;
                    return Ok(());
                }
            }
            Err(meta.error(format!(
                "{what} honours only `#[serde(skip_serializing_if = \"Option::is_none\")]`"
            )))
        })?;
    }
    Ok(skip)
}

pub fn from_body(input: &DeriveInput) -> syn::Result<TokenStream> {
    let fields = named_fields(input, "FromBody")?;
    let name = &input.ident;
    let mut reads = Vec::new();
    for f in &fields {
        if let Some(attr) = f.attrs.iter().find(|a| a.path().is_ident("serde")) {
            return Err(syn::Error::new(
                attr.span(),
                "FromBody reads fields by their Rust names: no serde attributes",
            ));
        }
        let ident = f.ident.as_ref().expect("named");
        let key = ident.to_string();
        let ty = &f.ty;
        reads.push(quote_spanned! {ty.span()=>
            #ident: <#ty as crate::json::BodyField>::read(fields.get(#key))?
        });
    }
    let (imp, tys, wh) = input.generics.split_for_impl();
    Ok(quote! {
        impl #imp crate::json::FromBody for #name #tys #wh {
            fn from_body(fields: &crate::json::Fields) -> ::core::option::Option<Self> {
                ::core::option::Option::Some(#name { #(#reads,)* })
            }
        }
    })
}

pub fn to_json(input: &DeriveInput) -> syn::Result<TokenStream> {
    let fields = named_fields(input, "ToJson")?;
    let name = &input.ident;
    let mut writes = Vec::new();
    // Whether a member was written already: only needed once a field may be
    // left out, so the usual answer is a fixed run of literal keys.
    let mut any_skip = false;
    for (i, f) in fields.iter().enumerate() {
        let ident = f.ident.as_ref().expect("named");
        let skip = skips_none(f, "ToJson")?;
        let key = ident.to_string();
        // `"key":` with serde_json's escaping of the name (none for a Rust
        // identifier); the separator is fixed unless an earlier member may
        // be missing.
        let quoted = format!("\"{key}\":");
        let write = quote_spanned! {f.ty.span()=>
            crate::json::ToJson::write_json(&self.#ident, out)
        };
        let sep = if i == 0 {
            quote!()
        } else if any_skip {
            quote!(if out.len() > start {
                out.push(b',');
            })
        } else {
            quote!(out.push(b',');)
        };
        if skip {
            any_skip = true;
            writes.push(quote! {
                if let ::core::option::Option::Some(v) = &self.#ident {
                    #sep
                    out.extend_from_slice(#quoted.as_bytes());
                    crate::json::ToJson::write_json(v, out);
                }
            });
        } else {
            writes.push(quote! {
                #sep
                out.extend_from_slice(#quoted.as_bytes());
                #write;
            });
        }
    }
    let start = any_skip.then(|| quote!(let start = out.len();));
    let (imp, tys, wh) = input.generics.split_for_impl();
    Ok(quote! {
        impl #imp crate::json::ToJson for #name #tys #wh {
            fn write_json(&self, out: &mut ::std::vec::Vec<u8>) {
                out.push(b'{');
                #start
                #(#writes)*
                out.push(b'}');
            }
        }
    })
}
