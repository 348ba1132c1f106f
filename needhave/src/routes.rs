//! The table: every call of the list, said once.
//!
//! Each route line is: doc comment, `METHOD "path" ?{ query }? (BodyType)?
//! => handler raw? replica? -> status Type, status [error codes], …;`
//! (`?{ name: Type in min..=max = default else code, … }`: a GET's query
//! parameters, each documented, which the dispatcher reads, bounds and
//! refuses with its code, and hands to the handler in this order; `raw`:
//! the handler builds its own responses from the request, after any
//! declared parameters; `replica`: a public GET that may read from a D1
//! read replica, while every other route reads the primary).
//! A write lists `500 [internal]`: besides a store failure, it is what a
//! write gets when the Worker cannot tell who asks (no `IP_SALT`, no
//! `CF-Connecting-IP`; see `Ctx::ip_hash`).
//! Each tool line is: doc comment (the description a model reads), `tool
//! name "Title" [hints]? { arguments } => plan;` where a plan is one or more branches of route calls
//! (`if arg` picks a branch by an optional argument, given and not `false`; `then if field` runs a
//! next call when the previous answer's field is true). From this the
//! `routes!` macro generates `resolve` (the one matcher), `answer` (the
//! dispatcher), `ROUTES`, `openapi_schemas`,
//! `TOOLS` and the tools' argument types.

use crate::handlers::health::Health;
use crate::handlers::life::{Closed, PostSecret, Report, Reported};
use crate::handlers::messages::{Accept, FirstCreated, FirstReply, NoMessages, ThreadKey, Waiting};
use crate::handlers::posts::{CreatePost, Kind, PostCreated};
// The tools' argument types name it (`expires_in`); native only, as they are.
#[cfg(not(target_arch = "wasm32"))]
use crate::handlers::posts::ExpiresIn;
use crate::handlers::threads::{
    Callback, LaterCreated, ReplySecret, Thread, ThreadKeyBody, ThreadMessage,
};
use crate::handlers::{health, life, messages, posts, threads};
use crate::search::{Cursor, Words};
// The answer types of raw routes (the list, a post, `/mcp`) only document them in the
// OpenAPI builder (native).
#[cfg_attr(target_arch = "wasm32", allow(unused_imports))]
use crate::handlers::posts::{PostList, PostView};
#[cfg_attr(target_arch = "wasm32", allow(unused_imports))]
use crate::mcp::{self, JsonRpcPayload, JsonRpcReply, JsonRpcResponse};
use crate::pages;

needhave_macros::routes! {
    /// The home page: what the list is, and where its calls are described. As Markdown with `Accept: text/markdown`.
    GET "/" => pages::home::page raw replica -> 200 html;

    /// The home page as Markdown.
    GET "/index.md" => pages::home::index_md raw replica -> 200 "text/markdown; charset=utf-8";

    /// The OpenAPI 3 description of every call of the list.
    GET "/openapi.json" => pages::openapi::document raw replica -> 200 serde_json::Value;

    /// The whole list for a model: what it is, every call and tool, the limits (llmstxt.org).
    GET "/llms.txt" => pages::llms::document raw replica -> 200 "text/plain; charset=utf-8";

    /// Crawlers welcome, with Content Signals (search and AI answers yes, training no).
    GET "/robots.txt" => pages::robots::robots raw replica -> 200 "text/plain; charset=utf-8";

    /// The public documents, as absolute URLs of this host.
    GET "/sitemap.xml" => pages::robots::sitemap raw replica -> 200 "application/xml";

    /// The API catalog (RFC 9727): the HTTP calls and the MCP endpoint, with their descriptions.
    GET "/.well-known/api-catalog" => pages::catalog::document raw replica
        -> 200 "application/linkset+json; profile=\"https://www.rfc-editor.org/info/rfc9727\"";

    /// The MCP server card: name, endpoint, protocol versions and tools, before connecting.
    GET "/mcp/server-card" => mcp::card::document raw replica -> 200 "application/json";

    /// The MCP server card, at its well-known address.
    GET "/.well-known/mcp/server-card.json" => mcp::card::document raw replica -> 200 "application/json";

    /// The agent skills index (agentskills.io discovery 0.2.0): one skill, with the digest of its SKILL.md.
    GET "/.well-known/agent-skills/index.json" => pages::skills::index raw replica -> 200 "application/json";

    /// The skill: how an agent uses the list, step by step.
    GET "/.well-known/agent-skills/needhave/SKILL.md" => pages::skills::skill raw replica
        -> 200 "text/markdown; charset=utf-8";

    /// Whether this instance can serve: 200 after one round trip to its store, 503 when the store does not answer. For load balancers and service managers.
    GET "/healthz" => health::check -> 200 Health, 503 [unavailable];

    /// The public list of open posts, newest first: 100 posts a page, filtered by kind and by words, each page one store round trip. No secrets, no messages.
    GET "/posts" ?{
        /// `need` or `have`: only posts of that kind.
        kind: Kind else bad_kind,
        /// Words the note must hold, each of them (at most 8 words, 100 characters). Compared as the duplicate rule compares notes: case, accents' Unicode forms, invisible characters and punctuation do not matter; a word matches a note word that begins with it (`bike` finds "bikes"). In Chinese, Japanese or Thai, two or more characters find the notes that contain them. No word at all is no filter.
        q: Words else bad_request,
        /// Posts per page, 1 to 100.
        limit: u32 in 1..=100 = 100 else bad_request,
        /// The `next` of the previous page: the posts older than its last one. Opaque: only cursors the list made are taken.
        before: Cursor else bad_request,
    } => posts::list raw replica -> 200 PostList, 400 [bad_kind, bad_request];

    /// The public list as an Atom 1.0 feed (RFC 4287): the 100 newest posts (of a kind, holding words, when asked), newest first, each entry linking to its post.
    GET "/posts.atom" ?{
        /// `need` or `have`: only posts of that kind.
        kind: Kind else bad_kind,
        /// Words the note must hold, each of them, as for `GET /posts`.
        q: Words else bad_request,
    } => pages::feed::feed raw replica -> 200 "application/atom+xml", 400 [bad_kind, bad_request];

    /// Create a need or a have, open until its author closes it or, with `expires_in`, until it expires. The post secret is in this answer only: keep it.
    POST "/posts" (CreatePost) => posts::create -> 201 PostCreated,
        400 [bad_request, bad_kind, bad_expiry, empty_note, huge_note, bad_note, contact_details],
        409 [duplicate_note], 429 [rate_limited], 500 [internal];

    /// One public post, with when it was posted and its status (open, closed or expired), also once it has ended. No secret, no messages.
    GET "/posts/:id" => posts::read raw replica -> 200 PostView, 404 [not_found], 410 [removed];

    /// Answer an open post with a first message. It stays hidden until the post's author accepts it; the reply secret is in this answer only.
    POST "/posts/:id/messages" (FirstReply) => messages::first -> 201 FirstCreated,
        400 [bad_request, empty_note, huge_note, bad_note], 404 [not_found], 409 [ended], 410 [removed],
        429 [too_many, rate_limited], 500 [internal];

    /// First messages are hidden from the public: always an empty list.
    GET "/posts/:id/messages" => messages::hidden replica -> 200 NoMessages, 404 [not_found],
        410 [removed];

    /// The post's author, with the post secret, reads the waiting first messages, oldest first (also once the post has ended).
    POST "/posts/:id/waiting" (PostSecret) => messages::waiting -> 200 Waiting,
        400 [bad_request], 403 [bad_secret], 404 [not_found], 410 [removed];

    /// The post's author accepts one first message (also once the post has ended); the answer is the new thread's key. With `close: true`, the post is closed in the same call.
    POST "/posts/:id/accept" (Accept) => messages::accept -> 201 ThreadKey,
        400 [bad_request], 403 [bad_secret], 404 [not_found], 409 [already_accepted], 410 [removed],
        500 [internal];

    /// The post's author, with the post secret, closes the post: it leaves the list and takes no new first replies; its waiting replies can still be read and accepted, and threads go on.
    POST "/posts/:id/close" (PostSecret) => life::close -> 201 Closed,
        400 [bad_request], 403 [bad_secret], 404 [not_found], 409 [ended], 410 [removed],
        500 [internal];

    /// Tell the list's operator about a post: why (spam, scam, illegal, prompt_injection, contact_details or other) and, optionally, a few words. A report hides nothing; only the operator removes posts. The same post reported again by the same address counts once.
    POST "/posts/:id/report" (Report) => life::report -> 202 Reported,
        400 [bad_request, bad_reason, empty_note, huge_note, bad_note], 404 [not_found],
        410 [removed], 429 [rate_limited], 500 [internal];

    /// The respondent, with the reply secret, learns whether the first message was accepted, and then the thread key.
    POST "/messages/:id/thread" (ReplySecret) => threads::callback -> 200 Callback,
        400 [bad_request], 403 [bad_secret], 404 [not_found];

    /// Read a thread by its key: the first message, then later ones, oldest first.
    POST "/threads" (ThreadKeyBody) => threads::read -> 200 Thread, 400 [bad_request], 404 [not_found];

    /// Write the next message in a thread.
    POST "/threads/messages" (ThreadMessage) => threads::write -> 201 LaterCreated,
        400 [bad_request, empty_note, huge_note, bad_note], 404 [not_found], 429 [rate_limited],
        500 [internal];

    /// MCP over stateless Streamable HTTP, JSON responses. 2024-11-05 to 2025-11-25: JSON-RPC `initialize`, `tools/list`, `tools/call`, `ping`, batches. 2026-07-28: `server/discover`, `tools/list`, `tools/call`, each with its version in `_meta`.
    POST "/mcp" (JsonRpcPayload) => mcp::endpoint raw -> 200 JsonRpcReply, 202 empty,
        400 JsonRpcResponse, 403 JsonRpcResponse, 404 JsonRpcResponse;

    /// Read the public list of open needs and haves, newest first, 100 posts at a time, each with its id, kind (need or have), public note, when it was posted and, if it has one, when it expires. Free; no secrets, no messages. Narrow it with kind and query; when the result has next, pass it back as cursor (with the same kind and query) for the older posts, until there is no next.
    tool list_posts "List needs and haves" [read_only] {
        /// need or have: only posts of that kind. Leave out for both.
        kind,
        /// Words every matching note must hold (at most 8 words, 100 characters). A word matches a note word that begins with it ("bike" finds "bikes"); case, accents' Unicode forms and punctuation do not matter. In Chinese, Japanese or Thai, give two or more characters of the text. Leave out for every post.
        query,
        /// The next value of a previous result, to read the posts older than it. Leave out for the newest.
        cursor,
    } => GET "/posts" { kind, q: query, before: cursor };

    /// Post a need: a short public note saying what you need. Returns the post's id and its secret. The secret appears only in this result and is never shown again: store it, it is the only way to read and accept replies. The note is public: it must not hold an e-mail address or a phone number (contact happens in the private thread after you accept a reply). Notes are 1 to 500 visible characters, without control characters, and must not already be on the list (a copy that differs only in case, punctuation, spacing or invisible characters counts as already there); one address may post 10 times an hour.
    tool create_need "Post a need" [idempotent] {
        /// What you need, in 1 to 500 characters. Public: no e-mail address or phone number.
        note: String,
        /// Seconds until the post ends by itself (300 to 7776000, i.e. five minutes to ninety days). Set it when the need has a deadline or the have is only for a while; 86400 is a day. Leave out for a post that stays until you close it.
        expires_in: Option<ExpiresIn>,
    } => POST "/posts" { kind: "need", note, expires_in };

    /// Post a have: a short public note saying what you have to offer. Returns the post's id and its secret. The secret appears only in this result and is never shown again: store it, it is the only way to read and accept replies. The note is public: it must not hold an e-mail address or a phone number (contact happens in the private thread after you accept a reply). Notes are 1 to 500 visible characters, without control characters, and must not already be on the list (a copy that differs only in case, punctuation, spacing or invisible characters counts as already there); one address may post 10 times an hour.
    tool create_have "Post a have" [idempotent] {
        /// What you have, in 1 to 500 characters. Public: no e-mail address or phone number.
        note: String,
        /// Seconds until the post ends by itself (300 to 7776000, i.e. five minutes to ninety days). Set it when the need has a deadline or the have is only for a while; 86400 is a day. Leave out for a post that stays until you close it.
        expires_in: Option<ExpiresIn>,
    } => POST "/posts" { kind: "have", note, expires_in };

    /// Read one post by its id: its kind (need or have), public note, when it was posted, and its status: open, closed (by its author) or expired, with when it ended. No secret, no messages.
    tool read_post "Read a post" [read_only] {
        /// The post id (32 hex characters).
        id: String,
    } => GET "/posts/:id" { id };

    /// Answer a post with a first message. The message stays hidden from everyone but the post's author until the author accepts it. Returns the message id and a reply secret; the secret appears only in this result: store both, then call read_thread with message_id and secret to learn whether you were accepted and get the thread. One address may send 20 first replies an hour; a post holds at most 20 waiting replies.
    tool write_first_reply "Reply to a post" {
        /// The id of the post you answer.
        post_id: String,
        /// Your first message, 1 to 500 characters. Only the post's author sees it.
        text: String,
    } => POST "/posts/:id/messages" { id: post_id, text };

    /// For a post's author, with the post secret. Without message_id: returns the waiting first replies (id and text), oldest first. With message_id: accepts that reply and returns the thread key, which opens a private thread with its author; keep the key. With close: true, closes the post (after accepting, when message_id is given too): it leaves the list and takes no new replies, while its waiting replies can still be read and accepted.
    tool accept_reply "Read or accept replies to your post" [idempotent] {
        /// The id of your post.
        post_id: String,
        /// The post secret you got when you created the post.
        secret: String,
        /// The id of the waiting reply to accept. Leave out to list the waiting replies.
        message_id: Option<String>,
        /// true: close the post, when your need is met or your have is gone. Leave out to keep it open.
        close: Option<bool>,
    } => if message_id POST "/posts/:id/accept" { id: post_id, secret, message_id, close }
       | if close POST "/posts/:id/close" { id: post_id, secret }
       | POST "/posts/:id/waiting" { id: post_id, secret };

    /// Read a private thread. The post's author passes thread_key. A respondent passes message_id and secret of their first reply: before acceptance the result is accepted: false and no key; after, it returns accepted: true, the same thread_key and the messages. Messages are the first reply, then later ones, oldest first.
    tool read_thread "Read a thread" [read_only] {
        /// The thread key, for whoever holds it.
        thread_key: Option<String>,
        /// A respondent's first-reply id (with secret), instead of thread_key.
        message_id: Option<String>,
        /// The reply secret of that first reply.
        secret: Option<String>,
    } => if thread_key POST "/threads" { thread_key }
       | POST "/messages/:id/thread" { id: message_id, secret }
         then if accepted POST "/threads" { thread_key: prev.thread_key };

    /// Write the next message in a private thread, by its key: the post's author and the accepted respondent both hold it. Only the two of you read it, so this is where contact details may go. Text is 1 to 500 characters; one address may write 100 thread messages an hour. Returns the new message's id and the post id; read_thread shows the conversation.
    tool write_thread_message "Write in a thread" {
        /// The thread key.
        thread_key: String,
        /// The message, 1 to 500 characters.
        text: String,
    } => POST "/threads/messages" { thread_key, text };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Resolved;

    /// A concrete path of a route: each `:name` an id.
    fn concrete(pattern: &str) -> String {
        pattern
            .split('/')
            .map(|s| {
                if s.starts_with(':') {
                    "0123456789abcdef0123456789abcdef"
                } else {
                    s
                }
            })
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Every route is found by its own method and path, with or without
    /// one trailing slash, by `route` and by `allow` alike, a `GET` route by
    /// `HEAD` too, and another method on its path is a 405 naming the same
    /// methods as `allow`, `HEAD` after each `GET`.
    #[test]
    fn one_matcher_agrees_with_itself_on_every_route() {
        for (i, r) in ROUTES.iter().enumerate() {
            let path = concrete(r.path);
            let methods: Vec<&str> = ROUTES
                .iter()
                .filter(|o| o.path == r.path)
                .flat_map(|o| match o.method {
                    "GET" => vec!["GET", "HEAD"],
                    m => vec![m],
                })
                .collect();
            if r.method == "GET" {
                assert!(
                    matches!(resolve("HEAD", &path), Resolved::Route { index, .. } if index == i),
                    "HEAD {path}"
                );
            } else if !methods.contains(&"GET") {
                assert!(
                    matches!(resolve("HEAD", &path), Resolved::Method { .. }),
                    "HEAD {path}"
                );
            }
            let mut variants = vec![path.clone()];
            if path != "/" {
                variants.push(format!("{path}/"));
            }
            for p in variants {
                assert!(
                    matches!(resolve(r.method, &p), Resolved::Route { index, .. } if index == i),
                    "{} {p}",
                    r.method
                );
                assert_eq!(API.route(r.method, &p).map(|f| f.path), Some(r.path), "{p}");
                let allow = API.allow(&p);
                let mut want = methods.join(", ");
                want.push_str(", OPTIONS");
                assert_eq!(allow, want, "{p}");
                match resolve("DELETE", &p) {
                    Resolved::Method { allow: methods } => {
                        assert_eq!(format!("{methods}, OPTIONS"), allow, "{p}")
                    }
                    other => panic!("DELETE {p}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn unknown_paths_are_unknown_to_every_asker() {
        for p in [
            "/nope",
            "//",
            "/posts//",
            "/posts/x/y/z",
            "/a/b/c/d/e/f/g",
            "/mcp//",
        ] {
            assert_eq!(resolve("GET", p), Resolved::NotFound, "{p:?}");
            assert!(API.route("GET", p).is_none(), "{p:?}");
            assert_eq!(API.allow(p), "OPTIONS", "{p:?}");
        }
    }

    #[test]
    fn path_parameters_come_back_in_order() {
        let id = "0123456789abcdef0123456789abcdef";
        match resolve("POST", &format!("/posts/{id}/accept")) {
            Resolved::Route { index, params } => {
                assert_eq!(ROUTES[index].path, "/posts/:id/accept");
                assert_eq!(params, [Some(id), None]);
            }
            other => panic!("{other:?}"),
        }
    }
}
