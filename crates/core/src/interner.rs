//! One shared copy of text that repeats from row to row.

use std::collections::HashSet;
use std::sync::Arc;

/// Hands out one `Arc<str>` per distinct text: the source, GPU name, currency,
/// region and interconnect of a million rows are a few dozen texts, each held
/// once rather than once per row. Scoped to a batch or a partition (it never
/// outlives the rows that point into it), so hostile input with a new text on
/// every row costs what owned strings would, no more.
#[derive(Debug, Default)]
pub struct Interner {
    texts: HashSet<Arc<str>, foldhash::fast::RandomState>,
}

impl Interner {
    /// The shared copy of `text`, made on its first appearance.
    pub fn get(&mut self, text: &str) -> Arc<str> {
        if let Some(t) = self.texts.get(text) {
            return Arc::clone(t);
        }
        let t: Arc<str> = text.into();
        self.texts.insert(Arc::clone(&t));
        t
    }

    /// Distinct texts held.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// True when nothing was interned yet.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_share_one_copy() {
        let mut i = Interner::default();
        let a = i.get("Cumulus Cloud");
        let b = i.get(&String::from("Cumulus Cloud"));
        let c = i.get("cumulus cloud");
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!((&*a, &*c, i.len()), ("Cumulus Cloud", "cumulus cloud", 2));
    }
}
