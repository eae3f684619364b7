//! By-value recursion: a struct or union that contains itself through members, arrays,
//! typedefs or its base would be infinitely large. Sequences, maps and `@external` members
//! are not edges of this graph, so they break a cycle.

use std::collections::BTreeSet;

use super::Resolver;
use crate::error::ErrorKind;
use crate::source::Location;

impl Resolver {
    pub(super) fn cycles(&mut self) {
        let mut done: BTreeSet<String> = BTreeSet::new();
        let starts: Vec<String> = self.by_value.keys().cloned().collect();
        for start in starts {
            let mut path = Vec::new();
            self.visit(&start, &mut path, &mut done);
        }
    }

    fn visit(
        &mut self,
        node: &str,
        path: &mut Vec<(String, Location)>,
        done: &mut BTreeSet<String>,
    ) {
        if done.contains(node) || path.len() > self.by_value.len() {
            return;
        }
        if let Some(pos) = path.iter().position(|(n, _)| n == node) {
            let mut cycle: Vec<String> = path[pos..].iter().map(|(n, _)| n.clone()).collect();
            cycle.push(node.to_string());
            // Point at the member of the first type that starts the cycle.
            let location = path[pos].1.clone();
            self.error(&location, ErrorKind::RecursiveType { cycle });
            return;
        }
        let edges = self.by_value.get(node).cloned().unwrap_or_default();
        for (target, location) in edges {
            path.push((node.to_string(), location));
            self.visit(&target, path, done);
            path.pop();
            if done.contains(node) {
                break;
            }
        }
        done.insert(node.to_string());
    }
}
