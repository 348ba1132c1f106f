//! The Worker's request URL, split: its runtime hands over the absolute URL,
//! not a path and a `Host`.

/// `scheme://authority/path?query#fragment` → authority and path, as the
/// runtime serializes a request's URL (absolute, its path never empty).
/// By hand, since the `url` crate (with its IDNA tables) would double the
/// Worker's size.
pub fn authority_and_path(url: &str) -> (&str, &str) {
    let rest = url
        .split_once(':')
        .and_then(|(_, r)| r.strip_prefix("//"))
        .unwrap_or(url);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at_checked(end).unwrap_or((rest, ""));
    let path = tail.split(['?', '#']).next().unwrap_or("");
    (authority, if path.is_empty() { "/" } else { path })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split() {
        for (url, authority, path) in [
            ("https://example.com/", "example.com", "/"),
            ("https://example.com/foo/bar", "example.com", "/foo/bar"),
            ("https://example.com/foo?a=1&b=/x", "example.com", "/foo"),
            ("https://example.com/foo#/frag?x", "example.com", "/foo"),
            (
                "http://127.0.0.1:8787/posts/abc",
                "127.0.0.1:8787",
                "/posts/abc",
            ),
            ("http://[::1]:8787/mcp", "[::1]:8787", "/mcp"),
            (
                "https://example.com/a%3F%23%2Fb?c",
                "example.com",
                "/a%3F%23%2Fb",
            ),
            ("https://example.com?query", "example.com", "/"),
            ("https://example.com#frag", "example.com", "/"),
            ("https://example.com", "example.com", "/"),
            ("/already/a/path", "", "/already/a/path"),
            ("", "", "/"),
        ] {
            assert_eq!(authority_and_path(url), (authority, path), "{url}");
        }
    }
}
