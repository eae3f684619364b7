//! Partition lists as one TEXT column: each name as `<byte length>:<name>`, concatenated.
//! Unambiguous for any name (a name may hold ':' or digits).

/// The channel key: sorted, deduplicated, encoded.
pub(crate) fn partition_key(partitions: &[String]) -> String {
    let mut sorted: Vec<&String> = partitions.iter().collect();
    sorted.sort();
    sorted.dedup();
    encode(sorted.into_iter())
}

/// The list as given, encoded.
pub(crate) fn encode_partitions(partitions: &[String]) -> String {
    encode(partitions.iter())
}

fn encode<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let mut out = String::new();
    for name in names {
        out.push_str(&name.len().to_string());
        out.push(':');
        out.push_str(name);
    }
    out
}

/// Decodes [`encode_partitions`]; `None` when the text is not in that form.
pub(crate) fn decode_partitions(mut text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    while !text.is_empty() {
        let (len, rest) = text.split_once(':')?;
        let len: usize = len.parse().ok()?;
        let name = rest.get(..len)?;
        out.push(name.to_string());
        text = rest.get(len..)?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_sorted_and_deduplicated_and_round_trips() {
        let given = vec![
            "b:1".to_string(),
            "a".to_string(),
            "b:1".to_string(),
            String::new(),
        ];
        assert_eq!(partition_key(&given), "0:1:a3:b:1");
        assert_eq!(decode_partitions(&encode_partitions(&given)), Some(given));
        assert_eq!(decode_partitions("5:ab"), None);
        assert_eq!(decode_partitions("x:ab"), None);
    }
}
