//! Min, max and arg-max of a series over any index range in O(log n): blocks of 64 values,
//! then blocks of blocks, so a pixel column standing for millions of trace entries costs a
//! few hundred comparisons, not millions.

#[derive(Clone, Debug, Default)]
pub struct RangeMinMax {
    values: Vec<i64>,
    /// levels[l][b] = (min, max, index of the first max) over block b of 64^(l+1) values.
    levels: Vec<Vec<(i64, i64, usize)>>,
}

const FAN: usize = 64;

impl RangeMinMax {
    pub fn new(values: Vec<i64>) -> RangeMinMax {
        let mut levels: Vec<Vec<(i64, i64, usize)>> = Vec::new();
        if values.len() > FAN {
            // the first level straight from the values: a (min, max, index) triple per value
            // would be 24 bytes × every trace position, made only to be merged
            let mut cur: Vec<(i64, i64, usize)> = values
                .chunks(FAN)
                .enumerate()
                .map(|(b, c)| {
                    let at = b * FAN;
                    c.iter().enumerate().skip(1).fold((c[0], c[0], at), |acc, (i, &v)| merge(acc, (v, v, at + i)))
                })
                .collect();
            while cur.len() > FAN {
                let next: Vec<(i64, i64, usize)> = cur.chunks(FAN).map(merge_all).collect();
                levels.push(std::mem::replace(&mut cur, next));
            }
            levels.push(cur);
        }
        RangeMinMax { values, levels }
    }

    pub fn values(&self) -> &[i64] {
        &self.values
    }

    /// (min, max, first index of max) over `[a, b)`, clamped to the series; `None` when empty.
    pub fn query(&self, a: usize, b: usize) -> Option<(i64, i64, usize)> {
        let b = b.min(self.values.len());
        if a >= b {
            return None;
        }
        Some(self.query_level(a, b, self.levels.len()))
    }

    /// Over `[a, b)` using blocks of level `l - 1` and below (level 0 = single values).
    fn query_level(&self, a: usize, b: usize, l: usize) -> (i64, i64, usize) {
        if l == 0 {
            let mut acc = (self.values[a], self.values[a], a);
            for i in a + 1..b {
                acc = merge(acc, (self.values[i], self.values[i], i));
            }
            return acc;
        }
        let w = FAN.pow(l as u32);
        let (ba, bb) = (a.div_ceil(w), b / w);
        if ba >= bb {
            return self.query_level(a, b, l - 1);
        }
        let mut acc = merge_all(&self.levels[l - 1][ba..bb]);
        if a < ba * w {
            acc = merge(self.query_level(a, ba * w, l - 1), acc);
        }
        if bb * w < b {
            acc = merge(acc, self.query_level(bb * w, b, l - 1));
        }
        acc
    }
}

/// Left operand first, so ties keep the earlier index.
fn merge(x: (i64, i64, usize), y: (i64, i64, usize)) -> (i64, i64, usize) {
    (x.0.min(y.0), if y.1 > x.1 { y.1 } else { x.1 }, if y.1 > x.1 { y.2 } else { x.2 })
}

fn merge_all(v: &[(i64, i64, usize)]) -> (i64, i64, usize) {
    v.iter().copied().reduce(merge).expect("non-empty")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_brute_force() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let vals: Vec<i64> = (0..300_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 1000) as i64 - 500
            })
            .collect();
        let r = RangeMinMax::new(vals.clone());
        for (a, b) in [(0, 1), (0, 300_000), (5, 70), (63, 4097), (4095, 262_145), (1000, 299_999), (299_998, 300_000)]
        {
            let s = &vals[a..b];
            let mx = *s.iter().max().unwrap();
            let arg = a + s.iter().position(|&v| v == mx).unwrap();
            assert_eq!(r.query(a, b), Some((*s.iter().min().unwrap(), mx, arg)), "{a}..{b}");
        }
        assert_eq!(r.query(10, 10), None);
    }
}
