//! A small sorted set of disjoint half-open byte ranges [start, end): the
//! sender's SACK scoreboard and the receiver's out-of-order data. Both hold a
//! handful of ranges, so a sorted Vec beats any tree.

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    r: Vec<(u64, u64)>,
}

impl RangeSet {
    pub fn is_empty(&self) -> bool {
        self.r.is_empty()
    }
    pub fn len(&self) -> usize {
        self.r.len()
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &(u64, u64)> {
        self.r.iter()
    }
    pub fn clear(&mut self) {
        self.r.clear();
    }
    pub fn first(&self) -> Option<(u64, u64)> {
        self.r.first().copied()
    }

    /// Insert [a, b), merging with neighbours. Returns the number of bytes
    /// that were not already covered, and the merged range containing [a, b).
    pub fn insert(&mut self, a: u64, b: u64) -> (u64, (u64, u64)) {
        if a >= b {
            return (0, (a, a));
        }
        // First range that ends at or after a (could touch/overlap).
        let i = self.r.partition_point(|&(_, e)| e < a);
        let mut start = a;
        let mut end = b;
        let mut covered = 0;
        let mut j = i;
        while j < self.r.len() && self.r[j].0 <= b {
            let (s, e) = self.r[j];
            covered += e.min(b).saturating_sub(s.max(a));
            start = start.min(s);
            end = end.max(e);
            j += 1;
        }
        self.r.splice(i..j, std::iter::once((start, end)));
        ((b - a) - covered, (start, end))
    }

    /// Drop everything below `x`.
    pub fn remove_below(&mut self, x: u64) {
        let i = self.r.partition_point(|&(_, e)| e <= x);
        self.r.drain(..i);
        if let Some(first) = self.r.first_mut() {
            if first.0 < x {
                first.0 = x;
            }
        }
    }

    /// Is the whole of [a, b) covered?
    pub fn covers(&self, a: u64, b: u64) -> bool {
        let i = self.r.partition_point(|&(_, e)| e <= a);
        i < self.r.len() && self.r[i].0 <= a && self.r[i].1 >= b
    }

    /// Bytes covered within [a, b).
    pub fn covered_in(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        self.r.iter().map(|&(s, e)| e.min(b).saturating_sub(s.max(a))).sum()
    }

    /// The first range that starts after or contains `x`, as (start, end),
    /// i.e. where the next covered bytes at or after x begin.
    pub fn next_covered_from(&self, x: u64) -> Option<(u64, u64)> {
        let i = self.r.partition_point(|&(_, e)| e <= x);
        self.r.get(i).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_merges_and_counts_new_bytes() {
        let mut s = RangeSet::default();
        assert_eq!(s.insert(10, 20).0, 10);
        assert_eq!(s.insert(30, 40).0, 10);
        assert_eq!(s.insert(15, 35), (10, (10, 40)));
        assert_eq!(s.len(), 1);
        assert_eq!(s.insert(40, 50).0, 10); // touching ranges merge
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), vec![(10, 50)]);
        assert_eq!(s.insert(12, 18).0, 0);
    }

    #[test]
    fn remove_below_trims() {
        let mut s = RangeSet::default();
        s.insert(10, 20);
        s.insert(30, 40);
        s.remove_below(15);
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), vec![(15, 20), (30, 40)]);
        s.remove_below(20);
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), vec![(30, 40)]);
        assert!(s.covers(31, 40));
        assert!(!s.covers(29, 31));
        assert_eq!(s.covered_in(0, 35), 5);
        assert_eq!(s.next_covered_from(5), Some((30, 40)));
        assert_eq!(s.next_covered_from(35), Some((30, 40)));
        assert_eq!(s.next_covered_from(40), None);
    }
}
