//! `fnmatch(3)` without flags, as the DDS Security 1.1 §9.4.1.2.6.2 / §9.4.1.3.2.3.1 rules use it
//! for topic and partition expressions: `*` any run, `?` one character, `[abc]`, `[a-z]`,
//! `[!a-z]` sets. There is no backslash escape (Cyclone's matcher has none either), and a
//! malformed set (`[` without `]`) matches nothing.
//!
//! The matcher is the usual backtracking one over the last `*` seen: at most
//! `pattern.len() * name.len()` steps, never recursive, so a hostile pattern costs no stack.

/// Whether `name` matches the fnmatch `pattern` (no flags).
pub fn fnmatch(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = name.chars().collect();
    let (mut pi, mut si) = (0usize, 0usize);
    // (pattern index after the last `*`, name index it is trying to absorb up to)
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi + 1, si));
                pi += 1;
                continue;
            }
            Some('?') => Some(pi + 1),
            Some('[') => match set_match(&p, pi + 1, s[si]) {
                Some((true, next)) => Some(next),
                _ => None,
            },
            Some(&c) if c == s[si] => Some(pi + 1),
            _ => None,
        };
        match (step, star) {
            (Some(next), _) => {
                pi = next;
                si += 1;
            }
            (None, Some((after, absorbed))) => {
                pi = after;
                si = absorbed + 1;
                star = Some((after, absorbed + 1));
            }
            (None, None) => return false,
        }
    }
    p[pi.min(p.len())..].iter().all(|&c| c == '*')
}

/// Matches `c` against the set starting at `p[at]` (just after `[`): `Some((matched, index
/// after ']'))`, or `None` when the set is not closed.
fn set_match(p: &[char], at: usize, c: char) -> Option<(bool, usize)> {
    let mut i = at;
    let negate = p.get(i) == Some(&'!');
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let lo = *p.get(i)?;
        if lo == ']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&hi| hi != ']') {
            let hi = *p.get(i + 2)?;
            matched |= lo <= c && c <= hi;
            i += 3;
        } else {
            matched |= lo == c;
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fnmatch;

    #[test]
    fn stars_and_questions() {
        assert!(fnmatch("*", ""));
        assert!(fnmatch("*", "DDSPerfRDataKS"));
        assert!(fnmatch("DDSPerf*", "DDSPerfRDataKS"));
        assert!(!fnmatch("DDSPerf*", "DDSPer"));
        assert!(fnmatch("Sq?are", "Square"));
        assert!(!fnmatch("Sq?are", "Sqare"));
        assert!(fnmatch("*a*b*c", "xxaxxbxxc"));
        assert!(!fnmatch("*a*b*c", "xxaxxbxxcx"));
        assert!(fnmatch("", ""));
        assert!(!fnmatch("", "x"));
        assert!(fnmatch("a**", "a"));
    }

    #[test]
    fn sets() {
        assert!(fnmatch("[CS]ircle", "Circle"));
        assert!(fnmatch("[CS]ircle", "Sircle"));
        assert!(!fnmatch("[CS]ircle", "Tircle"));
        assert!(fnmatch("part[0-9]", "part7"));
        assert!(!fnmatch("part[!0-9]", "part7"));
        assert!(fnmatch("part[!0-9]", "partx"));
        assert!(
            !fnmatch("part[0-9", "part7"),
            "an unclosed set matches nothing"
        );
        assert!(fnmatch("[]]", "]"));
    }

    #[test]
    fn no_escape_and_no_blowup() {
        assert!(fnmatch("a\\*", "a\\xyz"));
        let long = "a".repeat(200);
        assert!(!fnmatch(&format!("{}b", "*a".repeat(30)), &long));
    }
}
