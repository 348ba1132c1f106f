//! The text rules against the committed tables, natively: the contact
//! details a note must not carry (`tests/data/contact-notes.tsv`) and the
//! normalized duplicate keys (`tests/data/note-keys.tsv`). `tests/http.rs`
//! checks the same tables over HTTP, where CI also runs them on the Worker.

mod common;

use needhave::error::Code;
use needhave::rules;

#[test]
fn contact_details_table() {
    let rows = common::data_table("contact-notes.tsv");
    assert!(rows.len() >= 120, "the table is read");
    let mut wrong = Vec::new();
    for row in &rows {
        let (expect, note) = (row[0].as_str(), row[1].as_str());
        let got = rules::note(note).map(|_| ());
        let ok = match expect {
            "pass" => got.is_ok(),
            "contact_details" => got == Err(Code::ContactDetails),
            "bad_note" => got == Err(Code::BadNote),
            other => panic!("unknown expectation {other:?}"),
        };
        if !ok {
            wrong.push(format!("{expect} {note:?} ({}): got {got:?}", row[2]));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn note_keys_table() {
    let rows = common::data_table("note-keys.tsv");
    assert!(rows.len() >= 55, "the table is read");
    let mut wrong = Vec::new();
    for row in &rows {
        let (key, note) = (row[0].as_str(), row[1].as_str());
        match rules::note(note) {
            Ok(n) if n.key == key => {}
            other => wrong.push(format!("{note:?}: want {key:?}, got {other:?}")),
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
