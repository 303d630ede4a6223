//! Distributions, not means: at scale the slow rank hides in the tail.

use serde::Serialize;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Distribution {
    pub count: usize,
    pub median_ns: i64,
    pub p90_ns: i64,
    pub max_ns: i64,
}

impl Distribution {
    pub fn of(v: &[i64]) -> Distribution {
        Distribution::of_owned(v.to_vec())
    }

    /// `of`, reordering the values it is given instead of a copy of them.
    pub fn of_owned(mut v: Vec<i64>) -> Distribution {
        let (median_ns, p90_ns, max_ns) = crate::stats::median_p90_max_in(&mut v);
        Distribution { count: v.len(), median_ns, p90_ns, max_ns }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn distribution_of_step_times() {
        assert_eq!(Distribution::of(&[]), Distribution::default());
        assert_eq!(Distribution::of(&[10, 30, 20]), Distribution { count: 3, median_ns: 20, p90_ns: 30, max_ns: 30 });
    }
}
