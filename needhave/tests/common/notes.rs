//! Notes to measure what a post costs on disk, and the sizes of a list at
//! which to measure it: `tests/limits.rs` asserts the bound for the ones
//! within it, and `needhave-bench disk` (which includes this file) reports
//! the rest, so both measure the same notes the same way.

/// splitmix64: the same letters on every run.
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Two Han letters of note `i`'s own (no digits: no phone shapes), so
/// that no two notes are the same.
pub fn tail(i: u64) -> String {
    [i % 64, i / 64]
        .iter()
        .map(|&d| char::from_u32(0x4e00 + d as u32).unwrap_or('?'))
        .collect()
}

/// Notes as people write them: about 500 characters of words of a
/// vocabulary of 5,000 (two to four syllables), the r-th most used 1/r as
/// often (Zipf's law). A young list has not seen most of them yet.
pub struct Ordinary {
    vocabulary: Vec<String>,
    cumulative: Vec<f64>,
}

impl Ordinary {
    pub fn new() -> Ordinary {
        let syllables: Vec<String> = "bcdfghklmnprstvz"
            .chars()
            .flat_map(|c| "aeiou".chars().map(move |v| format!("{c}{v}")))
            .collect();
        let vocabulary: Vec<String> = (0..5000u64)
            .map(|w| {
                (0..2 + mix(w) % 3)
                    .map(|s| syllables[(mix(w * 4 + s) % syllables.len() as u64) as usize].as_str())
                    .collect()
            })
            .collect();
        let mut total = 0.0;
        let cumulative = (0..vocabulary.len())
            .map(|r| {
                total += 1.0 / (r as f64 + 1.0);
                total
            })
            .collect();
        Ordinary {
            vocabulary,
            cumulative,
        }
    }

    /// Note `i`.
    pub fn note(&self, i: u64) -> String {
        let total = self.cumulative[self.cumulative.len() - 1];
        let mut words: Vec<&str> = Vec::new();
        let (mut length, mut k) = (0, 0);
        while length < 480 {
            let x = mix(i * 1000 + k) as f64 / 2f64.powi(64) * total;
            let word = &self.vocabulary[self.cumulative.partition_point(|&c| c <= x)];
            words.push(word);
            length += word.len() + 1;
            k += 1;
        }
        format!("{} {}", words.join(" "), tail(i))
    }
}

/// The `n`th letter from `base`.
pub fn letter(base: u32, n: u64) -> char {
    char::from_u32(base + n as u32).unwrap_or('?')
}

/// Note `i` of 498 Han letters, its `k`th the `nth(k)` letter from
/// U+4E00, then its tail.
pub fn han(i: u64, nth: impl Fn(u64) -> u64) -> String {
    (0..498).map(|k| letter(0x4e00, nth(k))).collect::<String>() + &tail(i)
}

/// `n` distinct words of `len` letters from `alphabet` letters at `base`.
pub fn unique_words(i: u64, n: u64, len: u64, base: u32, alphabet: u64) -> String {
    let words: Vec<String> = (0..n)
        .map(|k| {
            (0..len)
                .map(|j| letter(base, mix(((i * 200 + k) * 16 + j) * 3 + 1) % alphabet))
                .collect()
        })
        .collect();
    format!("{} {}", words.join(" "), tail(i))
}

/// Words of one to ten random letters, about 500 bytes.
pub fn random_words(i: u64) -> String {
    let mut note = String::new();
    let mut j = 0;
    while note.len() < 485 {
        let len = 1 + mix(i * 7919 + j) % 10;
        note.extend((0..len).map(|k| letter(97, mix(i * 100_000 + j * 20 + k) % 26)));
        note.push(' ');
        j += 1;
    }
    note + &tail(i)
}

/// 498 letters drawn from `alphabet`.
pub fn from_alphabet(i: u64, alphabet: &[u8]) -> String {
    (0..498)
        .map(|j| alphabet[(mix(i * 1000 + j) % alphabet.len() as u64) as usize] as char)
        .collect::<String>()
        + &tail(i)
}

/// Whether a list of `posts` posts is one of the sizes at which what a
/// post costs is measured, besides the last: just before and just after
/// each move of the waiting words (`store::PENDING_MAX` posts) from the
/// 127th post on. What a post costs moves with where the list is between
/// two moves and with how many of the index's segments are still apart,
/// and the bound holds at every size.
pub fn measured_size(posts: u64) -> bool {
    let every = needhave::store::PENDING_MAX as u64;
    posts >= 2 * every - 1 && (posts.is_multiple_of(every) || (posts + 1).is_multiple_of(every))
}

/// The size of a list that costs the most against its bound, of those
/// [`seen`](Worst::see).
#[derive(Clone, Copy, Debug, Default)]
pub struct Worst {
    pub posts: u64,
    /// What the file grew by.
    pub grew: i64,
    /// Five times the notes' bytes plus 1 KiB a post.
    pub bound: i64,
}

impl Worst {
    /// A list of `posts` posts of `bytes` of notes in all, the file grown
    /// by `grew`.
    pub fn see(&mut self, posts: u64, bytes: i64, grew: i64) {
        let bound = 5 * bytes + 1024 * posts as i64;
        if self.bound == 0 || grew * self.bound > self.grew * bound {
            *self = Worst { posts, grew, bound };
        }
    }

    /// Bytes a post, and its bound.
    pub fn per_post(&self) -> (i64, i64) {
        let n = self.posts.max(1) as i64;
        (self.grew / n, self.bound / n)
    }

    pub fn ratio(&self) -> f64 {
        self.grew as f64 / self.bound.max(1) as f64
    }
}
