//! `GET /.well-known/api-catalog` (RFC 9727): a linkset (RFC 9264, JSON)
//! naming the list's two APIs by their URLs — the HTTP calls, described by
//! the OpenAPI document, and the MCP endpoint, described by its server
//! card — each with `/llms.txt` as its documentation.
//!
//! Written as a JSON template around the serving origin rather than built
//! as a `serde_json::Value`: the same bytes (members in serde_json's sorted
//! order), and 0.6 KB less gzip of the Worker's .wasm (bench/worker-size.sh's
//! build).

use super::{media_of, origin, text};
use crate::http::{Request, Response};
use crate::Ctx;

/// The linkset for `origin` (`scheme://host[:port]`), as JSON text.
pub fn linkset(origin: &str) -> String {
    // The origin as the inside of a JSON string: a Host header may hold `"`
    // or `\`.
    let quoted = serde_json::to_string(origin).unwrap_or_default();
    let o = quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or("");
    let doc = format!(
        r#"[{{"href":"{o}/llms.txt","type":"text/plain"}},{{"href":"{o}/","type":"text/html"}}]"#
    );
    format!(
        r#"{{"linkset":[{{"anchor":"{o}/.well-known/api-catalog","item":[{{"href":"{o}/"}},{{"href":"{o}/mcp"}}]}},{{"anchor":"{o}/","service-desc":[{{"href":"{o}/openapi.json","type":"application/openapi+json"}}],"service-doc":{doc}}},{{"anchor":"{o}/mcp","service-desc":[{{"href":"{o}/mcp/server-card","type":"application/json"}}],"service-doc":{doc}}}]}}"#
    )
}

pub async fn document(req: &Request, ctx: &Ctx) -> Response {
    text(
        media_of(ctx.api, "/.well-known/api-catalog"),
        linkset(&origin(req)),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    /// The template is the linkset as a `Value` would have it, byte for
    /// byte, and stays valid JSON whatever the Host header held.
    #[test]
    fn same_as_the_value_it_replaces() {
        for origin in [
            "https://needhave.io",
            "http://127.0.0.1:8787",
            r#"https://a"b\c"#,
        ] {
            let doc = json!([{"href": format!("{origin}/llms.txt"), "type": "text/plain"},
                             {"href": format!("{origin}/"), "type": "text/html"}]);
            let want = json!({"linkset": [
                {
                    "anchor": format!("{origin}/.well-known/api-catalog"),
                    "item": [{"href": format!("{origin}/")}, {"href": format!("{origin}/mcp")}],
                },
                {
                    "anchor": format!("{origin}/"),
                    "service-desc": [{"href": format!("{origin}/openapi.json"), "type": "application/openapi+json"}],
                    "service-doc": doc,
                },
                {
                    "anchor": format!("{origin}/mcp"),
                    "service-desc": [{"href": format!("{origin}/mcp/server-card"), "type": "application/json"}],
                    "service-doc": doc,
                },
            ]});
            let got = super::linkset(origin);
            assert_eq!(got, serde_json::to_string(&want).unwrap(), "{origin}");
            assert_eq!(serde_json::from_str::<Value>(&got).unwrap(), want);
        }
    }
}
