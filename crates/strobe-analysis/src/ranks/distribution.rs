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

    /// `of` the durations gathered.
    pub fn of_durations(d: Durations) -> Distribution {
        match d {
            Durations::Narrow(mut v) => {
                let (m, p, x) = crate::stats::median_p90_max_in(&mut v);
                Distribution { count: v.len(), median_ns: m as i64, p90_ns: p as i64, max_ns: x as i64 }
            }
            Durations::Wide(v) => Distribution::of_owned(v),
        }
    }
}

/// Durations gathered for a `Distribution`: 4 bytes each while every one fits an i32 (±2.1 s:
/// nearly every launch call, launch delay and kernel), 8 from the first that does not. A
/// rank's million launch pairs held three durations each for the launch statistics.
#[derive(Debug)]
pub enum Durations {
    Narrow(Vec<i32>),
    Wide(Vec<i64>),
}

impl Durations {
    pub fn with_capacity(n: usize) -> Durations {
        Durations::Narrow(Vec::with_capacity(n))
    }

    pub fn push(&mut self, ns: i64) {
        match self {
            Durations::Narrow(v) => match i32::try_from(ns) {
                Ok(x) => v.push(x),
                Err(_) => {
                    let mut w: Vec<i64> = Vec::with_capacity(v.capacity().max(v.len() + 1));
                    w.extend(v.iter().map(|&x| x as i64));
                    w.push(ns);
                    *self = Durations::Wide(w);
                }
            },
            Durations::Wide(v) => v.push(ns),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Durations::Narrow(v) => v.len(),
            Durations::Wide(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn sum(&self) -> i64 {
        match self {
            Durations::Narrow(v) => v.iter().map(|&x| x as i64).sum(),
            Durations::Wide(v) => v.iter().sum(),
        }
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

    #[test]
    fn durations_narrow_or_wide_give_the_distribution_of_their_values() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for n in [0usize, 1, 2, 7, 100, 1001] {
            for wide_at in [None, Some(0), Some(n / 2)] {
                let mut d = Durations::with_capacity(n);
                let mut all = Vec::new();
                for i in 0..n {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // negative and positive, and one past i32 where asked
                    let mut v = (x % 2_000_000) as i64 - 1_000_000;
                    if wide_at == Some(i) {
                        v = 3_000_000_000 * if i % 2 == 0 { 1 } else { -1 };
                    }
                    d.push(v);
                    all.push(v);
                }
                assert_eq!(matches!(d, Durations::Wide(_)), wide_at.is_some() && n > 0);
                assert_eq!((d.len(), d.sum()), (all.len(), all.iter().sum::<i64>()));
                assert_eq!(Distribution::of_durations(d), Distribution::of(&all), "n {n} wide at {wide_at:?}");
            }
        }
    }
}
