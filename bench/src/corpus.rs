//! The notes the benches write: `note`, one template of a dozen words
//! (the search bench's list, and `load`'s create-only runs), and
//! `search_note`, the same with a long word that half the notes share
//! (the search bench's and the Worker's seed, `d1_seed`). Below the
//! benches that use them, so that none imports another for its notes.

use needhave::rules::Kind;

/// Fillers every note has three of: each in about 1 note in 65.
const FILLERS: &[&str] = &[
    "spare", "ladder", "lamp", "desk", "chair", "monitor", "cable", "router", "tent", "stove",
    "kayak", "drill", "saw", "piano", "guitar", "violin", "camera", "lens", "tripod", "printer",
    "scanner", "laptop", "phone", "charger", "battery", "bike", "helmet", "pump", "lock", "rack",
    "trailer", "van", "truck", "boat", "oar", "sail", "anchor", "rope", "net", "rod", "reel",
    "bait", "hook", "boots", "jacket", "gloves", "scarf", "hat", "coat", "skis", "poles", "board",
    "wax", "skates", "sled", "tools", "paint", "brush", "roller", "tape", "glue", "nails",
    "screws", "bolts", "washers",
];

/// The `i`th note of the template, and its kind.
pub fn note(i: u64) -> (Kind, String) {
    let kind = if i.is_multiple_of(2) {
        Kind::Need
    } else {
        Kind::Have
    };
    let f = |k: u64| FILLERS[((i / 7 + k * 31 + i * k) % FILLERS.len() as u64) as usize];
    // `gpu` in 10% of the notes; a word of its own in every note (rare);
    // Chinese in 5%.
    let gpu = if i % 10 == 3 { " gpu tonight" } else { "" };
    let zh = if i % 20 == 7 {
        " 我有一辆自行车"
    } else {
        ""
    };
    let note = format!(
        "{} a {} and a {}{gpu}, ask for item x{i:x}q{zh} near {}",
        kind.as_str(),
        f(1),
        f(2),
        f(3)
    );
    (kind, note)
}

/// What half the notes of the search bench add to the template (those
/// whose number is 2 or 3 modulo 4: both kinds, every note of Chinese,
/// half of those of `gpu`): a word of ten letters, longer than a prefix
/// the index keeps a list for until it keeps deeper ones, and a short word
/// for each of seven letters, so that the long word beside those letters
/// as a query has a page as full as the long word alone.
pub const COMMON: &str = " commonword big cat dog fox go hat jam";

/// The `i`th note of the search bench's list (`search`, and `d1_seed` for
/// the Worker's figures), and its kind: [`note`], and [`COMMON`] in half.
pub fn search_note(i: u64) -> (Kind, String) {
    let (kind, mut text) = note(i);
    if i % 4 >= 2 {
        text.push_str(COMMON);
    }
    (kind, text)
}
