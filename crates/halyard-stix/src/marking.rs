//! (stub until the real module lands: the agreed API only)
/// TLP levels, least to most restrictive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tlp {
    /// TLP:CLEAR
    Clear,
    /// TLP:GREEN
    Green,
    /// TLP:AMBER
    Amber,
    /// TLP:AMBER+STRICT
    AmberStrict,
    /// TLP:RED
    Red,
}
impl Tlp {
    /// Name.
    pub fn as_str(&self) -> &'static str {
        match self {
            Tlp::Clear => "clear",
            Tlp::Green => "green",
            Tlp::Amber => "amber",
            Tlp::AmberStrict => "amber+strict",
            Tlp::Red => "red",
        }
    }
    /// Parse.
    pub fn parse(s: &str) -> Option<Tlp> {
        Some(match s.to_ascii_lowercase().as_str() {
            "clear" | "white" => Tlp::Clear,
            "green" => Tlp::Green,
            "amber" => Tlp::Amber,
            "amber+strict" | "amber-strict" => Tlp::AmberStrict,
            "red" => Tlp::Red,
            _ => return None,
        })
    }
}
