//! The durations of every span of one name (a kernel, an op, an annotation), for the
//! histogram Details shows beside the selected span: is this occurrence typical or an outlier?

use strobe_store::Store;

#[derive(Clone, Debug, PartialEq)]
pub struct NameDurations {
    /// Sorted ascending.
    pub durs: Vec<i64>,
}

impl NameDurations {
    /// Every span named `name` (a string id of `store`).
    pub fn of(store: &Store, name: u32) -> NameDurations {
        let mut durs: Vec<i64> = (0..store.span_count() as u32)
            .filter(|&s| store.span_meta(s).name == name)
            .map(|s| store.span_end(s) - store.span_start(s))
            .collect();
        durs.sort_unstable();
        NameDurations { durs }
    }

    /// The share of occurrences no longer than `d` (0..=1).
    pub fn rank_of(&self, d: i64) -> f64 {
        if self.durs.is_empty() {
            return 0.0;
        }
        self.durs.partition_point(|&x| x <= d) as f64 / self.durs.len() as f64
    }

    /// The value at quantile `q` (nearest rank).
    pub fn quantile(&self, q: f64) -> Option<i64> {
        let n = self.durs.len();
        (n > 0).then(|| self.durs[((q.clamp(0.0, 1.0) * (n - 1) as f64).round() as usize).min(n - 1)])
    }

    /// Whether `bins` are logarithmic: the durations span more than a decade (short and
    /// long launches of one kernel both readable).
    pub fn log_bins(&self) -> bool {
        matches!((self.durs.first(), self.durs.last()), (Some(&lo), Some(&hi)) if lo > 0 && hi as f64 / lo as f64 > 10.0)
    }

    /// `n` bins over [min, max], logarithmic per `log_bins`, else linear: (lower edge, count).
    pub fn bins(&self, n: usize) -> Vec<(f64, usize)> {
        let (Some(&lo), Some(&hi)) = (self.durs.first(), self.durs.last()) else { return Vec::new() };
        let n = n.max(1);
        let log = self.log_bins();
        let (a, b) = if log { ((lo as f64).ln(), (hi as f64).ln()) } else { (lo as f64, hi as f64) };
        let w = ((b - a) / n as f64).max(f64::MIN_POSITIVE);
        let mut counts = vec![0usize; n];
        for &d in &self.durs {
            let x = if log { (d as f64).ln() } else { d as f64 };
            counts[(((x - a) / w) as usize).min(n - 1)] += 1;
        }
        counts
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let edge = a + i as f64 * w;
                (if log { edge.exp() } else { edge }, c)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_quantiles_and_bins() {
        let d = NameDurations { durs: vec![10, 20, 30, 40, 1000] };
        assert_eq!(d.rank_of(30), 0.6);
        assert_eq!(d.quantile(0.5), Some(30));
        assert_eq!(d.quantile(1.0), Some(1000));
        let bins = d.bins(4);
        assert_eq!(bins.iter().map(|b| b.1).sum::<usize>(), 5);
        // 10..1000 spans two decades: log bins, the first starts at 10
        assert!((bins[0].0 - 10.0).abs() < 1e-6 && bins.len() == 4);
        assert_eq!(bins[3].1, 1, "the outlier alone in the last bin");
        let lin = NameDurations { durs: vec![10, 11, 12, 19] }.bins(3);
        assert_eq!(lin.iter().map(|b| b.1).collect::<Vec<_>>(), vec![3, 0, 1]);
    }
}
