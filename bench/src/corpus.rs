//! The notes the benches write: `note`, one template of a dozen words
//! (the search bench's list, the Worker's seed, `d1_seed`, and `load`'s
//! create-only runs). Below the benches that use it, so that none imports
//! another for its notes.

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
