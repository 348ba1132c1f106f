//! The checked-in documents the answers are made from, all in
//! `needhave/documents/`: the home page, the OpenAPI document, the discovery
//! documents, the MCP server card and MCP's static answers (`mcp.min.json`).
//! Each is generated natively from the table and held to it by
//! `tests/golden.rs`.
//!
//! The native server carries them in its binary. The Worker does not: the
//! same directory is its static assets (`[assets]` in `wrangler.toml`,
//! binding `ASSETS`, the Worker run before any asset), and the Worker
//! fetches a document through the binding the first time a request needs it
//! ([`crate::pages::assets::needed`]) and keeps it for the isolate's life.
//! In the `.wasm` their bytes would be loaded by every cold start, for
//! answers most cold starts never give (`docs/design/worker-size.md`).
//! What is served is the same text on every target, so every answer keeps
//! its bytes.

/// One checked-in document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asset {
    Html,
    Markdown,
    OpenApi,
    Llms,
    Robots,
    Sitemap,
    Catalog,
    Skill,
    SkillsIndex,
    ServerCard,
    Mcp,
}

impl Asset {
    pub const ALL: [Asset; 11] = [
        Asset::Html,
        Asset::Markdown,
        Asset::OpenApi,
        Asset::Llms,
        Asset::Robots,
        Asset::Sitemap,
        Asset::Catalog,
        Asset::Skill,
        Asset::SkillsIndex,
        Asset::ServerCard,
        Asset::Mcp,
    ];

    /// Its file in `needhave/documents/`, the Worker's assets directory.
    pub const fn file(self) -> &'static str {
        match self {
            Asset::Html => "index.html",
            Asset::Markdown => "index.md",
            Asset::OpenApi => "openapi.min.json",
            Asset::Llms => "llms.txt",
            Asset::Robots => "robots.txt",
            Asset::Sitemap => "sitemap.xml",
            Asset::Catalog => "api-catalog.json",
            Asset::Skill => "SKILL.md",
            Asset::SkillsIndex => "agent-skills-index.json",
            Asset::ServerCard => "server-card.json",
            Asset::Mcp => "mcp.min.json",
        }
    }

    /// The document, as checked in: in the binary natively; in the Worker,
    /// what the binding gave ([`keep`]), or empty before that.
    pub fn text(self) -> &'static str {
        #[cfg(not(target_arch = "wasm32"))]
        return self.bundled();
        #[cfg(target_arch = "wasm32")]
        return LOADED
            .with(|loaded| loaded[self as usize].get())
            .unwrap_or("");
    }

    /// The checked-in file, in the binary.
    #[cfg(not(target_arch = "wasm32"))]
    pub const fn bundled(self) -> &'static str {
        match self {
            Asset::Html => include_str!("../documents/index.html"),
            Asset::Markdown => include_str!("../documents/index.md"),
            Asset::OpenApi => include_str!("../documents/openapi.min.json"),
            Asset::Llms => include_str!("../documents/llms.txt"),
            Asset::Robots => include_str!("../documents/robots.txt"),
            Asset::Sitemap => include_str!("../documents/sitemap.xml"),
            Asset::Catalog => include_str!("../documents/api-catalog.json"),
            Asset::Skill => include_str!("../documents/SKILL.md"),
            Asset::SkillsIndex => include_str!("../documents/agent-skills-index.json"),
            Asset::ServerCard => include_str!("../documents/server-card.json"),
            Asset::Mcp => include_str!("../documents/mcp.min.json"),
        }
    }

    /// Whether the Worker holds it already (natively: always).
    pub fn is_loaded(self) -> bool {
        cfg!(not(target_arch = "wasm32")) || !self.text().is_empty()
    }
}

#[cfg(target_arch = "wasm32")]
thread_local! {
    /// What the Worker fetched, by [`Asset`]: each at most once an isolate
    /// (two requests that both find it missing fetch it twice, the first
    /// copy kept), never freed: the checked-in documents, a bounded few.
    static LOADED: [std::cell::Cell<Option<&'static str>>; 11] = Default::default();
}

/// The Worker keeps `text` as `asset` for the rest of the isolate's life.
#[cfg(target_arch = "wasm32")]
pub fn keep(asset: Asset, text: String) {
    if !asset.is_loaded() {
        let text: &'static str = Box::leak(text.into_boxed_str());
        LOADED.with(|loaded| loaded[asset as usize].set(Some(text)));
    }
}
