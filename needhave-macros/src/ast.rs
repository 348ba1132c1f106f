//! The model of a `routes!` table, and the parser from tokens into it.
//!
//! Parsing only recognises shapes; every rule about what a shape may say
//! (known methods, real statuses, tools pointing at real routes, which
//! attributes may stand before an entry …) lives in `check.rs`, so that one
//! table with five mistakes gets five errors. A parse error stops at the first
//! token that is not the expected shape, so the model keeps whatever a check
//! needs to point at (the attributes, not just the doc text read from them).

use proc_macro2::Span;
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{braced, bracketed, parenthesized, token, Attribute, Ident, LitInt, LitStr, Token, Type};

pub struct Table {
    pub routes: Vec<Route>,
    pub tools: Vec<Tool>,
}

/// `/// doc  METHOD "path" (Body)? => handler marks -> responses;`
pub struct Route {
    /// Everything written before the entry; only doc comments are allowed.
    pub attrs: Vec<Attribute>,
    pub doc: String,
    pub method: Ident,
    pub path: LitStr,
    /// `?{ … }`: the query parameters, in the order they are checked.
    pub query: Vec<QueryParam>,
    /// The `?` that opens them, for errors about the whole declaration.
    pub query_mark: Option<Token![?]>,
    pub body: Option<Type>,
    pub handler: syn::Path,
    /// The words between the handler and `->`, as written; `check.rs`
    /// judges them (known, once each, `replica` on a GET only).
    pub marks: Vec<Ident>,
    /// `raw`: the handler builds its own responses.
    pub raw: bool,
    /// `replica`: the route may read from a read replica (a D1 session
    /// `first-unconstrained`, or the bookmark the client sent); every other
    /// route reads the primary.
    pub replica: bool,
    pub responses: Vec<Response>,
}

/// `/// doc  name: Type (in MIN..=MAX)? (= DEFAULT)? else code` — one query
/// parameter: the dispatcher reads it as `Type` (`crate::query::FromQuery`),
/// checks its bounds, and answers `code` when it does not fit. Without a
/// default the handler gets an `Option`.
pub struct QueryParam {
    pub attrs: Vec<Attribute>,
    pub doc: String,
    pub name: Ident,
    pub ty: Type,
    pub bounds: Option<(LitInt, LitInt)>,
    pub default: Option<LitInt>,
    /// `else code`; its absence is `check.rs`'s error, spanned at the name.
    pub error: Option<Ident>,
}

pub struct Response {
    pub status: LitInt,
    pub kind: ResponseKind,
    /// The span of the response's last token, so that an error can cover
    /// the whole `404 Post` or `400 [bad_kind]`.
    pub end: Span,
}

pub enum ResponseKind {
    Json(Type),
    Html,
    /// A document of this media type (`"text/plain; charset=utf-8"`), as text.
    Media(LitStr),
    Empty,
    Errors(Vec<Ident>),
}

/// `/// doc  tool name "Title" [hints]? { fields } => plan;`
pub struct Tool {
    /// Everything written before the entry; only doc comments are allowed.
    pub attrs: Vec<Attribute>,
    pub doc: String,
    pub name: Ident,
    pub title: LitStr,
    pub hints: Vec<Ident>,
    pub fields: Vec<Field>,
    pub branches: Vec<Branch>,
}

pub struct Field {
    pub attrs: Vec<Attribute>,
    pub name: Ident,
    /// `None`: the argument feeds a query parameter and takes its type (as
    /// an `Option`) and, without a doc comment of its own, its description.
    pub ty: Option<Type>,
}

/// `(if arg)? step (then if field step)*` — the first branch whose `if` argument
/// is present runs; a branch without `if` is the fallback and comes last.
pub struct Branch {
    pub when: Option<Ident>,
    pub steps: Vec<Step>,
}

pub struct Step {
    /// For every step after the first: run only when this field of the
    /// previous result is `true`.
    pub when_prev: Option<Ident>,
    pub method: Ident,
    pub path: LitStr,
    pub args: Vec<Arg>,
}

pub struct Arg {
    pub name: Ident,
    pub source: Source,
}

pub enum Source {
    Arg(Ident),
    Lit(LitStr),
    Prev(Ident),
}

/// A path split into its segments; `:name` is a parameter.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Segment {
    Lit(String),
    Param(String),
}

impl Route {
    pub fn segments(&self) -> Vec<Segment> {
        segments(&self.path.value())
    }

    pub fn params(&self) -> Vec<String> {
        self.segments()
            .into_iter()
            .filter_map(|s| match s {
                Segment::Param(p) => Some(p),
                Segment::Lit(_) => None,
            })
            .collect()
    }

    /// The path with parameter names erased: two routes with the same shape
    /// and method are the same route.
    pub fn shape(&self) -> Vec<Option<String>> {
        shape(&self.path.value())
    }

    pub fn success(&self) -> Option<&Response> {
        self.responses
            .iter()
            .find(|r| !matches!(r.kind, ResponseKind::Errors(_)))
    }
}

impl Table {
    /// The route a tool's step calls, if the table has it.
    pub fn route_of(&self, step: &Step) -> Option<&Route> {
        let shape = shape(&step.path.value());
        self.routes
            .iter()
            .find(|r| r.method == step.method && r.shape() == shape)
    }

    /// The query parameter a tool's argument is passed to, in the first
    /// step that passes it to one.
    pub fn fed_query(&self, tool: &Tool, arg: &Ident) -> Option<&QueryParam> {
        tool.branches
            .iter()
            .flat_map(|b| &b.steps)
            .find_map(|step| {
                let route = self.route_of(step)?;
                step.args.iter().find_map(|a| match &a.source {
                    Source::Arg(src) if src == arg => route.query.iter().find(|q| q.name == a.name),
                    _ => None,
                })
            })
    }
}

pub fn segments(path: &str) -> Vec<Segment> {
    path.trim_start_matches('/')
        .split('/')
        .map(|s| match s.strip_prefix(':') {
            Some(p) => Segment::Param(p.to_string()),
            None => Segment::Lit(s.to_string()),
        })
        .collect()
}

pub fn shape(path: &str) -> Vec<Option<String>> {
    segments(path)
        .into_iter()
        .map(|s| match s {
            Segment::Lit(l) => Some(l),
            Segment::Param(_) => None,
        })
        .collect()
}

mod kw {
    syn::custom_keyword!(tool);
    syn::custom_keyword!(html);
    syn::custom_keyword!(empty);
    syn::custom_keyword!(then);
    syn::custom_keyword!(prev);
}

/// The text of the doc comments; other attributes are left to `check.rs`.
fn doc_of(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(nv) = &attr.meta {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
            {
                lines.push(s.value().trim().to_string());
            }
        }
    }
    lines.join(" ").trim().to_string()
}

impl Parse for Table {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut routes = Vec::new();
        let mut tools = Vec::new();
        while !input.is_empty() {
            let attrs = input.call(Attribute::parse_outer)?;
            if input.peek(kw::tool) {
                tools.push(parse_tool(input, attrs)?);
            } else {
                routes.push(parse_route(input, attrs)?);
            }
        }
        Ok(Table { routes, tools })
    }
}

fn parse_route(input: ParseStream, attrs: Vec<Attribute>) -> syn::Result<Route> {
    let method: Ident = input.parse()?;
    let path: LitStr = input.parse()?;
    let (query_mark, query) = if input.peek(Token![?]) {
        let mark = input.parse::<Token![?]>()?;
        (Some(mark), parse_query(input)?)
    } else {
        (None, Vec::new())
    };
    let body = if input.peek(token::Paren) {
        let content;
        parenthesized!(content in input);
        Some(content.parse::<Type>()?)
    } else {
        None
    };
    input.parse::<Token![=>]>()?;
    let handler: syn::Path = input.parse()?;
    // Any words up to `->`: a misspelled mark is a spanned error from
    // `check.rs` that names the marks, not a parse error at `->`.
    let mut marks = Vec::new();
    while input.peek(Ident) {
        marks.push(input.parse::<Ident>()?);
    }
    let raw = marks.iter().any(|m| m == "raw");
    let replica = marks.iter().any(|m| m == "replica");
    input.parse::<Token![->]>()?;
    let mut responses = Vec::new();
    loop {
        let status: LitInt = input.parse()?;
        let (kind, end) = if input.peek(token::Bracket) {
            let content;
            let bracket = bracketed!(content in input);
            let codes = Punctuated::<Ident, Token![,]>::parse_terminated(&content)?;
            (
                ResponseKind::Errors(codes.into_iter().collect()),
                bracket.span.close(),
            )
        } else if input.peek(kw::html) {
            let html = input.parse::<kw::html>()?;
            (ResponseKind::Html, html.span)
        } else if input.peek(LitStr) {
            let media: LitStr = input.parse()?;
            let end = media.span();
            (ResponseKind::Media(media), end)
        } else if input.peek(kw::empty) {
            let empty = input.parse::<kw::empty>()?;
            (ResponseKind::Empty, empty.span)
        } else {
            let ty: Type = input.parse()?;
            let end = ty
                .to_token_stream()
                .into_iter()
                .last()
                .map_or(status.span(), |t| t.span());
            (ResponseKind::Json(ty), end)
        };
        responses.push(Response { status, kind, end });
        if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(Route {
        doc: doc_of(&attrs),
        attrs,
        method,
        path,
        query,
        query_mark,
        body,
        handler,
        marks,
        raw,
        replica,
        responses,
    })
}

fn parse_query(input: ParseStream) -> syn::Result<Vec<QueryParam>> {
    let content;
    braced!(content in input);
    let mut params = Vec::new();
    while !content.is_empty() {
        let attrs = content.call(Attribute::parse_outer)?;
        let name: Ident = content.parse()?;
        content.parse::<Token![:]>()?;
        let ty: Type = content.parse()?;
        let bounds = if content.peek(Token![in]) {
            content.parse::<Token![in]>()?;
            let min: LitInt = content.parse()?;
            content.parse::<Token![..=]>()?;
            let max: LitInt = content.parse()?;
            Some((min, max))
        } else {
            None
        };
        let default = if content.peek(Token![=]) {
            content.parse::<Token![=]>()?;
            Some(content.parse::<LitInt>()?)
        } else {
            None
        };
        let error = if content.peek(Token![else]) {
            content.parse::<Token![else]>()?;
            Some(content.parse::<Ident>()?)
        } else {
            None
        };
        params.push(QueryParam {
            doc: doc_of(&attrs),
            attrs,
            name,
            ty,
            bounds,
            default,
            error,
        });
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    Ok(params)
}

fn parse_tool(input: ParseStream, attrs: Vec<Attribute>) -> syn::Result<Tool> {
    input.parse::<kw::tool>()?;
    let name: Ident = input.parse()?;
    let title: LitStr = input.parse()?;
    let mut hints = Vec::new();
    if input.peek(token::Bracket) {
        let content;
        bracketed!(content in input);
        hints = Punctuated::<Ident, Token![,]>::parse_terminated(&content)?
            .into_iter()
            .collect();
    }
    let content;
    braced!(content in input);
    let mut fields = Vec::new();
    while !content.is_empty() {
        let attrs = content.call(Attribute::parse_outer)?;
        let name: Ident = content.parse()?;
        let ty = if content.peek(Token![:]) {
            content.parse::<Token![:]>()?;
            Some(content.parse::<Type>()?)
        } else {
            None
        };
        fields.push(Field { attrs, name, ty });
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    input.parse::<Token![=>]>()?;
    let mut branches = vec![parse_branch(input)?];
    while input.peek(Token![|]) {
        input.parse::<Token![|]>()?;
        branches.push(parse_branch(input)?);
    }
    input.parse::<Token![;]>()?;
    Ok(Tool {
        doc: doc_of(&attrs),
        attrs,
        name,
        title,
        hints,
        fields,
        branches,
    })
}

fn parse_branch(input: ParseStream) -> syn::Result<Branch> {
    let when = if input.peek(Token![if]) {
        input.parse::<Token![if]>()?;
        Some(input.parse()?)
    } else {
        None
    };
    let mut steps = vec![parse_step(input, None)?];
    while input.peek(kw::then) {
        input.parse::<kw::then>()?;
        input.parse::<Token![if]>()?;
        let field: Ident = input.parse()?;
        steps.push(parse_step(input, Some(field))?);
    }
    Ok(Branch { when, steps })
}

fn parse_step(input: ParseStream, when_prev: Option<Ident>) -> syn::Result<Step> {
    let method: Ident = input.parse()?;
    let path: LitStr = input.parse()?;
    let content;
    braced!(content in input);
    let mut args = Vec::new();
    while !content.is_empty() {
        let name: Ident = content.parse()?;
        let source = if content.peek(Token![:]) {
            content.parse::<Token![:]>()?;
            if content.peek(LitStr) {
                Source::Lit(content.parse()?)
            } else if content.peek(kw::prev) {
                content.parse::<kw::prev>()?;
                content.parse::<Token![.]>()?;
                Source::Prev(content.parse()?)
            } else {
                Source::Arg(content.parse()?)
            }
        } else {
            Source::Arg(name.clone())
        };
        args.push(Arg { name, source });
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    Ok(Step {
        when_prev,
        method,
        path,
        args,
    })
}
