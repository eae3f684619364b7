//! Which topic names Halyard accepts, and the error that names what is wrong with one.
//!
//! DDS 1.4 defines TOPICNAME (Annex B) as letters, digits and `_`, not starting with a digit;
//! ROS 2 adds `/` (`rt/chatter`). The peers go further: Cyclone DDS accepts any printable
//! ASCII character but space and `* ? [ ] " ' # $` (the wildcards of partition and
//! permissions expressions, quotes and the characters it reserves), a leading digit
//! included, and Fast DDS checks nothing. Halyard follows Cyclone's rule, the strictest of
//! the two that interoperate today: every name a Cyclone DDS application can create stays
//! usable, and one it refuses (a space, a wildcard, a non-ASCII letter) is refused here too,
//! so a topic name never works on one side of a mixed system only. The length limit, 256
//! bytes, is RTPS's bound on the topic name in discovery data.

use std::fmt;

/// The longest topic name, in bytes.
pub const MAX_TOPIC_NAME_LEN: usize = 256;

/// The printable ASCII characters a topic name may not hold (besides space).
const RESERVED: &[char] = &['*', '?', '[', ']', '"', '\'', '#', '$'];

/// Why a topic name was refused (by `create_topic` and the other topic constructors, as
/// [`crate::Error::BadTopicName`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TopicNameError {
    /// The name is empty.
    Empty,
    /// The name is longer than [`MAX_TOPIC_NAME_LEN`] bytes.
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// The name holds a character outside the topic-name character set.
    BadCharacter {
        /// The name.
        name: String,
        /// The first character refused.
        character: char,
        /// Its position among the name's characters, from 0.
        index: usize,
    },
}

impl fmt::Display for TopicNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopicNameError::Empty => write!(f, "a topic name cannot be empty"),
            TopicNameError::TooLong { len } => write!(
                f,
                "a topic name is at most {MAX_TOPIC_NAME_LEN} bytes, not {len}"
            ),
            TopicNameError::BadCharacter {
                name,
                character,
                index,
            } => write!(
                f,
                "topic name {name:?}: character {character:?} (U+{:04X}) at index {index} is \
                 not allowed; a topic name holds letters, digits and the printable ASCII \
                 punctuation but * ? [ ] \" ' # $ (no space, no control or non-ASCII character)",
                u32::from(*character)
            ),
        }
    }
}

impl std::error::Error for TopicNameError {}

/// Checks `name` against the topic-name rule (see the module documentation): 1 to
/// [`MAX_TOPIC_NAME_LEN`] bytes of printable ASCII other than space and `* ? [ ] " ' # $`.
pub fn check_topic_name(name: &str) -> Result<(), TopicNameError> {
    if name.is_empty() {
        return Err(TopicNameError::Empty);
    }
    let allowed = |c: char| c.is_ascii_graphic() && !RESERVED.contains(&c);
    if let Some((index, character)) = name.chars().enumerate().find(|(_, c)| !allowed(*c)) {
        return Err(TopicNameError::BadCharacter {
            name: name.to_string(),
            character,
            index,
        });
    }
    if name.len() > MAX_TOPIC_NAME_LEN {
        return Err(TopicNameError::TooLong { len: name.len() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dds_ros_2_and_cyclone_names_are_accepted() {
        for name in [
            "Square",
            "_x9",
            "9lives",
            "rt/chatter",
            "rq/add_two_intsRequest",
            "Demo::Readings",
            "a-b.c:d@e,f;g+h=i%j&k(l)m<n>o!p^q`r{s}t|u~v\\w",
            &"a".repeat(MAX_TOPIC_NAME_LEN),
        ] {
            assert_eq!(check_topic_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn what_cyclone_refuses_is_refused_with_the_character() {
        for (name, character, index) in [
            ("a b", ' ', 1),
            ("Sq*", '*', 2),
            ("?", '?', 0),
            ("a[0]", '[', 1),
            ("x]", ']', 1),
            ("say\"hi", '"', 3),
            ("it's", '\'', 2),
            ("#1", '#', 0),
            ("$HOME", '$', 0),
            ("tab\there", '\t', 3),
            ("nul\0", '\0', 3),
            ("del\x7f", '\x7f', 3),
            ("Größe", 'ö', 2),
        ] {
            let e = check_topic_name(name).unwrap_err();
            assert_eq!(
                e,
                TopicNameError::BadCharacter {
                    name: name.to_string(),
                    character,
                    index
                },
                "{name:?}"
            );
            let text = e.to_string();
            assert!(text.contains(&format!("{character:?}")), "{text}");
        }
        assert_eq!(check_topic_name(""), Err(TopicNameError::Empty));
        assert_eq!(
            check_topic_name(&"a".repeat(MAX_TOPIC_NAME_LEN + 1)),
            Err(TopicNameError::TooLong {
                len: MAX_TOPIC_NAME_LEN + 1
            })
        );
    }
}
