//! The two kinds of post. A rule of the list, so that every floor may name
//! it: the store's migrations index old posts by kind.

#[needhave_macros::schema(serialize)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
// In place: tool input schemas have no `$ref`.
#[schemars(inline)]
pub enum Kind {
    Need,
    Have,
}

impl Kind {
    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "need" => Some(Kind::Need),
            "have" => Some(Kind::Have),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Need => "need",
            Kind::Have => "have",
        }
    }
}
