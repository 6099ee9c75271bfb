//! Sets of completion indexes as ordered, disjoint intervals, and their
//! compressed form in `status.completedIndexes` and
//! `status.failedIndexes` (upstream `orderedIntervals` in
//! `indexed_job_utils.go`).
//!
//! The text lists the intervals in increasing order, separated by commas;
//! an interval of three or more indexes is written `first-last`, one of
//! two as both: `{1, 3, 4, 5, 7, 8}` is `"1,3-5,7,8"`. Reading is lenient,
//! as upstream's: an interval that does not parse is skipped, one starting
//! at or past `completions` ends the list, one ending past it is cut to
//! `completions - 1`, and adjacent intervals are joined.

use std::fmt;

/// The indexes `first..=last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    /// The lowest index.
    pub first: i32,
    /// The highest index.
    pub last: i32,
}

/// Disjoint, non-adjacent intervals in increasing order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrderedIntervals(pub Vec<Interval>);

impl OrderedIntervals {
    /// The indexes `text` lists below `completions` (upstream
    /// `parseIndexesFromString`).
    pub fn parse(text: &str, completions: i32) -> Self {
        let mut result: Vec<Interval> = Vec::new();
        if text.is_empty() {
            return OrderedIntervals(result);
        }
        for part in text.split(',') {
            let mut limits = part.split('-');
            let Some(first) = limits.next().and_then(parse_index) else { continue };
            if first >= i64::from(completions) {
                break;
            }
            let last = match limits.next() {
                None => first,
                Some(last) => match parse_index(last) {
                    Some(last) => last.min(i64::from(completions) - 1),
                    None => continue,
                },
            };
            // Both are below `completions`, an i32.
            let (first, last) = (first as i32, last as i32);
            match result.last_mut() {
                Some(previous) if previous.last == first - 1 => previous.last = last,
                _ => result.push(Interval { first, last }),
            }
        }
        OrderedIntervals(result)
    }

    /// These intervals with `indexes`, given in increasing order, added
    /// (upstream `withOrderedIndexes`).
    pub fn with_ordered_indexes(&self, indexes: &[i32]) -> Self {
        let singles = indexes.iter().map(|&ix| Interval { first: ix, last: ix }).collect();
        self.merge(&OrderedIntervals(singles))
    }

    /// The union of both, adjacent intervals joined (upstream `merge`).
    pub fn merge(&self, other: &OrderedIntervals) -> Self {
        let mut result: Vec<Interval> = Vec::with_capacity(self.0.len() + other.0.len());
        let (mut a, mut b) = (self.0.iter().peekable(), other.0.iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.first < y.first => a.next(),
                (Some(_), Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, Some(_)) => b.next(),
                (None, None) => break,
            };
            let Some(&next) = next else { break };
            match result.last_mut() {
                Some(previous) if next.first <= previous.last.saturating_add(1) => {
                    previous.last = previous.last.max(next.last);
                }
                _ => result.push(next),
            }
        }
        OrderedIntervals(result)
    }

    /// How many indexes the intervals hold (upstream `total`).
    pub fn total(&self) -> i32 {
        self.0.iter().map(|iv| iv.last - iv.first + 1).sum()
    }

    /// Whether `index` is in one of the intervals (upstream `has`).
    pub fn has(&self, index: i32) -> bool {
        let at = self.0.partition_point(|iv| iv.last < index);
        self.0.get(at).is_some_and(|iv| iv.first <= index)
    }

    /// Whether there are no indexes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for OrderedIntervals {
    /// The compressed form: `"1,3-5,7,8"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, iv) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}", iv.first)?;
            if iv.last == iv.first + 1 {
                write!(f, ",{}", iv.last)?;
            } else if iv.last > iv.first {
                write!(f, "-{}", iv.last)?;
            }
        }
        Ok(())
    }
}

/// A decimal index as Go's `strconv.Atoi` reads one (an optional sign,
/// digits), `None` otherwise.
fn parse_index(text: &str) -> Option<i64> {
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ivs(pairs: &[(i32, i32)]) -> OrderedIntervals {
        OrderedIntervals(pairs.iter().map(|&(first, last)| Interval { first, last }).collect())
    }

    /// Upstream `TestIntervalsHaveIndex`.
    #[test]
    fn intervals_have_index() {
        let cases = [
            ("empty", vec![], 4, false),
            ("before all", vec![(2, 4), (5, 7)], 1, false),
            ("after all", vec![(2, 4), (6, 8)], 9, false),
            ("in between", vec![(2, 4), (6, 8)], 5, false),
            ("in first", vec![(2, 4), (6, 8)], 2, true),
            ("in second", vec![(2, 4), (6, 8)], 8, true),
        ];
        for (name, intervals, index, want) in cases {
            assert_eq!(ivs(&intervals).has(index), want, "{name}");
        }
    }

    /// The status side of upstream `TestCalculateSucceededIndexes` (the
    /// `wantStatusIntervals` of its cases with `prevSucceeded`).
    #[test]
    fn parses_the_status_form() {
        let cases = [
            ("prev interval out of range", "0-5,8-10", 8, vec![(0, 5)]),
            ("prev interval partially out of range", "0-5,8-10", 10, vec![(0, 5), (8, 9)]),
            ("prev and new separate", "0,4,5,10-12", 13, vec![(0, 0), (4, 5), (10, 12)]),
            ("prev between new", "3,4,6", 9, vec![(3, 4), (6, 6)]),
            ("new between prev", "2,7,8", 9, vec![(2, 2), (7, 8)]),
            ("new within prev", "2-7", 10, vec![(2, 7)]),
            ("corrupted interval", "0,1-foo,bar", 4, vec![(0, 0)]),
            ("empty", "", 4, vec![]),
            ("negative", "-1,2", 4, vec![(2, 2)]),
        ];
        for (name, text, completions, want) in cases {
            assert_eq!(OrderedIntervals::parse(text, completions), ivs(&want), "{name}");
        }
    }

    #[test]
    fn prints_the_compressed_form_and_reads_it_back() {
        let cases = [
            (vec![], ""),
            (vec![(0, 0)], "0"),
            (vec![(1, 1), (3, 5), (7, 8)], "1,3-5,7,8"),
            (vec![(0, 1)], "0,1"),
            (vec![(0, 9_999)], "0-9999"),
        ];
        for (intervals, want) in cases {
            let intervals = ivs(&intervals);
            assert_eq!(intervals.to_string(), want);
            assert_eq!(OrderedIntervals::parse(want, 10_000), intervals, "{want}");
        }
        assert_eq!(ivs(&[(1, 1), (3, 5), (7, 8)]).total(), 6);
    }

    #[test]
    fn merges_overlapping_and_adjacent_intervals() {
        let merged = ivs(&[(0, 2), (8, 9)]).merge(&ivs(&[(1, 4), (5, 5), (7, 7), (20, 21)]));
        assert_eq!(merged, ivs(&[(0, 5), (7, 9), (20, 21)]));
        assert_eq!(ivs(&[(2, 3)]).with_ordered_indexes(&[0, 1, 4, 6]), ivs(&[(0, 4), (6, 6)]));
    }
}
