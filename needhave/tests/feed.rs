//! `GET /posts.atom`, black-box (so also against `wrangler dev`): an Atom
//! 1.0 feed of the public list, read back with a real XML parser: the
//! newest posts first, each entry linking to its post, hostile notes
//! escaped so that they read back exactly, an ETag and 304 like the list.
//! (`.ci/feed` also has Python's feedparser read it.)

mod common;

use common::*;
use quick_xml::events::Event;
use quick_xml::Reader;

/// One entry as read back from the XML.
#[derive(Debug, Default, Clone)]
struct Entry {
    id: String,
    title: String,
    link: String,
    content: String,
    category: String,
    updated: String,
}

#[derive(Debug, Default)]
struct Feed {
    id: String,
    title: String,
    updated: String,
    self_link: String,
    author: bool,
    entries: Vec<Entry>,
}

/// Parses the feed, failing on anything that is not well-formed XML in the
/// Atom namespace.
fn parse(xml: &str) -> Feed {
    let mut reader = Reader::from_str(xml);
    let mut feed = Feed::default();
    let mut path: Vec<String> = Vec::new();
    let mut entry: Option<Entry> = None;
    let mut text = String::new();
    loop {
        let event = reader.read_event().expect("well-formed XML");
        match event {
            Event::Start(e) => {
                path.push(open(&e, &mut feed, &mut entry));
                text.clear();
            }
            Event::Empty(e) => {
                open(&e, &mut feed, &mut entry);
            }
            Event::Text(t) => text.push_str(&t.decode().expect("text")),
            Event::GeneralRef(r) => {
                let name = String::from_utf8(r.as_ref().to_vec()).unwrap();
                let c = match name.as_str() {
                    "amp" => "&".to_string(),
                    "lt" => "<".to_string(),
                    "gt" => ">".to_string(),
                    "quot" => "\"".to_string(),
                    "apos" => "'".to_string(),
                    n if n.starts_with("#x") => {
                        let code = u32::from_str_radix(&n[2..], 16).expect("a character reference");
                        char::from_u32(code).expect("a character").to_string()
                    }
                    n if n.starts_with('#') => {
                        let code: u32 = n[1..].parse().expect("a character reference");
                        char::from_u32(code).expect("a character").to_string()
                    }
                    other => panic!("unknown entity &{other};"),
                };
                text.push_str(&c);
            }
            Event::End(e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                assert_eq!(path.pop().as_deref(), Some(name.as_str()));
                let parent = path.last().map(String::as_str);
                match (name.as_str(), parent, entry.as_mut()) {
                    ("entry", _, _) => feed.entries.push(entry.take().unwrap()),
                    ("id", Some("entry"), Some(en)) => en.id = text.clone(),
                    ("title", Some("entry"), Some(en)) => en.title = text.clone(),
                    ("content", Some("entry"), Some(en)) => en.content = text.clone(),
                    ("updated", Some("entry"), Some(en)) => en.updated = text.clone(),
                    ("id", Some("feed"), _) => feed.id = text.clone(),
                    ("title", Some("feed"), _) => feed.title = text.clone(),
                    ("updated", Some("feed"), _) => feed.updated = text.clone(),
                    _ => {}
                }
                text.clear();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert!(path.is_empty(), "unclosed {path:?}");
    feed
}

/// An element opens: what its attributes say, and its name.
fn open(e: &quick_xml::events::BytesStart, feed: &mut Feed, entry: &mut Option<Entry>) -> String {
    let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
    let attr = |key: &str| {
        e.attributes()
            .map(|a| a.expect("attribute"))
            .find(|a| a.key.as_ref() == key.as_bytes())
            .map(|a| a.unescape_value().expect("attribute value").into_owned())
    };
    if name == "feed" {
        assert_eq!(
            attr("xmlns").as_deref(),
            Some("http://www.w3.org/2005/Atom")
        );
    }
    match (name.as_str(), entry.as_mut()) {
        ("entry", _) => *entry = Some(Entry::default()),
        ("link", Some(en)) => {
            assert_eq!(attr("rel").as_deref(), Some("alternate"));
            en.link = attr("href").expect("href");
        }
        ("category", Some(en)) => en.category = attr("term").expect("term"),
        ("link", None) if attr("rel").as_deref() == Some("self") => {
            feed.self_link = attr("href").unwrap()
        }
        ("author", None) => feed.author = true,
        _ => {}
    }
    name
}

async fn feed() -> (Resp, Feed) {
    let r = Client::new().get("/posts.atom").await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/atom+xml"));
    let f = parse(&r.text());
    (r, f)
}

fn base() -> &'static str {
    &server().base
}

#[tokio::test]
async fn the_feed_is_the_list_newest_first_with_hostile_notes_escaped() {
    let hostile = format!(
        "<script>alert(\"x\")</script> & 'quotes' ]]> &amp; e\u{301} 日本 🚲 \u{2028} {}",
        fresh_note("atom")
    );
    let c = Client::new();
    let r = c
        .post(
            "/posts",
            serde_json::json!({"kind": "have", "note": hostile}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let hostile_id = r.json()["id"].as_str().unwrap().to_string();
    let multi = format!("line one\r\nline\ttwo {}", fresh_note("atom"));
    let r = c
        .post("/posts", serde_json::json!({"kind": "need", "note": multi}))
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let multi_id = r.json()["id"].as_str().unwrap().to_string();

    let list = Client::new().get("/posts").await.json();
    let (_, f) = feed().await;
    assert_eq!(f.id, format!("{}/posts.atom", base()));
    assert_eq!(f.self_link, format!("{}/posts.atom", base()));
    assert!(f.title.contains("Needhave"));
    assert!(f.author, "a feed author, since entries have none");
    let posts = list["posts"].as_array().unwrap();
    assert!(f.entries.len() <= 100);
    // The same posts in the same order as the list (the list may have moved
    // on between the two reads only by posts newer than both).
    let ids: Vec<&str> = posts.iter().map(|p| p["id"].as_str().unwrap()).collect();
    let at = f
        .entries
        .iter()
        .position(|e| e.id.ends_with(ids[0]))
        .expect("the list's newest post is in the feed");
    for (e, p) in f.entries[at..].iter().zip(posts) {
        let url = format!("{}/posts/{}", base(), p["id"].as_str().unwrap());
        assert_eq!(e.id, url);
        assert_eq!(e.link, url);
        assert_eq!(e.category, p["kind"].as_str().unwrap());
        assert_eq!(
            e.content,
            p["note"].as_str().unwrap(),
            "the note reads back exactly"
        );
        assert!(
            e.title.starts_with(&format!("{}: ", e.category)),
            "{}",
            e.title
        );
    }
    // Newest first is the list's order (checked above), the order posts
    // were written; two written at once may carry their times the other
    // way round, so the feed's time is the latest of its entries'.
    assert_eq!(Some(&f.updated), f.entries.iter().map(|e| &e.updated).max());
    let find = |id: &str| {
        f.entries
            .iter()
            .find(|e| e.id.ends_with(id))
            .unwrap()
            .clone()
    };
    let h = find(&hostile_id);
    assert_eq!(h.content, hostile);
    assert!(h.title.starts_with("have: <script>"), "{}", h.title);
    let m = find(&multi_id);
    assert_eq!(m.content, multi, "a carriage return survives the XML");
    assert_eq!(m.title, "need: line one");
    // The entry links to the post as JSON.
    let r = Client::new()
        .get(m.link.strip_prefix(base()).unwrap())
        .await;
    assert_eq!(r.json()["note"], serde_json::json!(multi));
}

#[tokio::test]
async fn the_feed_revalidates() {
    let (first, _) = feed().await;
    let tag = first.header("etag").expect("etag").to_string();
    assert!(first
        .header("cache-control")
        .is_some_and(|c| c.starts_with("public, max-age=")));
    let r = Client::new()
        .send("GET", "/posts.atom", None, &[("if-none-match", &tag)])
        .await;
    if r.status == 200 {
        // Another test posted in between: the tag moved with the list.
        assert_ne!(r.header("etag"), Some(tag.as_str()));
        return;
    }
    assert_eq!(r.status, 304);
    assert!(r.body.is_empty());
    assert_eq!(r.header("etag"), Some(tag.as_str()));
    // The list's tag is not the feed's.
    let list = Client::new().get("/posts").await;
    assert_ne!(list.header("etag"), Some(tag.as_str()));
}

#[tokio::test]
async fn the_home_page_and_its_link_header_name_the_feed() {
    let r = Client::new().get("/").await;
    assert!(r
        .header("link")
        .unwrap()
        .contains(r#"</posts.atom>; rel="alternate"; type="application/atom+xml""#));
    assert!(r
        .text()
        .contains(r#"<link rel="alternate" type="application/atom+xml" href="/posts.atom""#));
}

/// A feed of one search: `kind` and `q` filter it as they filter the list,
/// its own address says what it holds, and its tag moves when a post it
/// would show arrives.
#[tokio::test]
async fn a_feed_of_one_search() {
    // A word of its own: hex digits after a letter, one word for the index.
    let word = fresh_note("w").replace(" #", "");
    let c = Client::new();
    let need = c
        .post(
            "/posts",
            serde_json::json!({"kind": "need", "note": format!("a need of {word}")}),
        )
        .await;
    assert_eq!(need.status, 201, "{}", need.text());
    let need_id = need.json()["id"].as_str().unwrap().to_string();
    let have = c
        .post(
            "/posts",
            serde_json::json!({"kind": "have", "note": format!("a have of {word}")}),
        )
        .await;
    assert_eq!(have.status, 201, "{}", have.text());

    let path = format!("/posts.atom?kind=need&q={word}");
    let r = c.get(&path).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let f = parse(&r.text());
    let url = format!("{}{path}", base());
    assert_eq!(f.self_link, url);
    assert_eq!(f.id, url);
    let ids: Vec<&str> = f.entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, [format!("{}/posts/{need_id}", base())]);
    // The word alone finds both, newest first; another word neither.
    let both = parse(&c.get(&format!("/posts.atom?q={word}")).await.text());
    assert_eq!(both.entries.len(), 2);
    assert_eq!(both.entries[1].id, ids[0]);
    let none = parse(&c.get(&format!("/posts.atom?q={word}x")).await.text());
    assert!(none.entries.is_empty());

    // The tag is this search's: the whole feed's is another, and a new
    // matching post moves it.
    let tag = r.header("etag").unwrap().to_string();
    let whole = c.get("/posts.atom").await;
    assert_ne!(whole.header("etag"), Some(tag.as_str()));
    let again = c.send("GET", &path, None, &[("if-none-match", &tag)]).await;
    if again.status == 304 {
        let r = c
            .post(
                "/posts",
                serde_json::json!({"kind": "need", "note": format!("another need of {word}")}),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text());
    }
    let moved = c.send("GET", &path, None, &[("if-none-match", &tag)]).await;
    assert_eq!(moved.status, 200);
    assert_ne!(moved.header("etag"), Some(tag.as_str()));
}
