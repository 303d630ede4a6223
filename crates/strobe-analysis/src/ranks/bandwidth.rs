//! The bandwidth of a collective as nccl-tests defines it. `bytes` is the message: all-gather
//! counts its output, reduce-scatter and all-reduce their input, all-to-all its total,
//! broadcast, reduce and point-to-point the buffer. The algorithm bandwidth is bytes over the
//! transfer time; the bus bandwidth scales it by what each rank must move for that
//! collective on a ring, so that every kind compares with the link's speed: all-reduce
//! 2(n−1)/n, all-gather, reduce-scatter and all-to-all (n−1)/n, the others 1.
//!
//! The transfer time of a matched instance is the latest end − the latest arrival: the time
//! after every rank was there, so a late rank does not count against the link.

use super::comm_ops::{dtype_bytes, kind_of, CommOp};

/// The bytes of `op` by nccl-tests' convention, or why they are unknown.
pub fn bytes_of(op: &CommOp) -> Result<u64, String> {
    let kind = kind_of(&op.name);
    let Some(dtype) = op.dtype.as_deref() else { return Err("no dtype recorded".into()) };
    let Some(es) = dtype_bytes(dtype) else { return Err(format!("element size of dtype {dtype} unknown")) };
    let n = match kind.as_str() {
        "barrier" => return Err("a barrier moves no data".into()),
        // a work record gives the input only: the output is the group's inputs together
        "all_gather" => op.out_nelems.or_else(|| {
            op.in_nelems.zip(op.group_size.and_then(|g| u64::try_from(g).ok())).and_then(|(n, g)| n.checked_mul(g))
        }),
        "gather" | "scatter" => op.in_nelems.max(op.out_nelems),
        _ => op.in_nelems,
    };
    let n = n.ok_or_else(|| "element count not recorded".to_string())?;
    n.checked_mul(es).ok_or_else(|| "element count out of range".to_string())
}

/// The bus-bandwidth factor of a collective kind over `n` ranks.
pub fn bus_factor(kind: &str, n: usize) -> f64 {
    let n = n.max(1) as f64;
    match kind {
        "all_reduce" => 2.0 * (n - 1.0) / n,
        "all_gather" | "reduce_scatter" | "all_to_all" => (n - 1.0) / n,
        _ => 1.0,
    }
}

/// (algbw, busbw) in GB/s (10⁹ bytes a second) of `bytes` moved in `transfer_ns` by a
/// collective of `kind` over `n` ranks; None for no time.
pub fn bandwidth(kind: &str, n: usize, bytes: u64, transfer_ns: i64) -> Option<(f64, f64)> {
    if transfer_ns <= 0 {
        return None;
    }
    let alg = bytes as f64 / transfer_ns as f64;
    Some((alg, alg * bus_factor(kind, n)))
}

/// The link a group of devices named `device` talks over, and its speed one way in GB/s where
/// the device name tells: NVLink by generation for data-centre parts, PCIe for the others.
/// A group spanning hosts runs at the network's speed instead (give it with `--link-gbps`).
pub fn link_of(device: Option<&str>, backend: Option<&str>) -> (String, Option<f64>) {
    let Some(d) = device.map(|d| d.to_ascii_uppercase()) else {
        let b = backend.unwrap_or("unknown");
        return (format!("{b} (no GPU named)"), None);
    };
    let has = |s: &str| d.contains(s);
    if has("B200") || has("B100") || has("GB200") || has("B300") {
        ("NVLink 5".into(), Some(900.0))
    } else if has("H800") {
        ("NVLink 4 (H800)".into(), Some(200.0))
    } else if (has("H100") || has("H200") || has("GH200")) && !has("PCIE") {
        ("NVLink 4".into(), Some(450.0))
    } else if has("A800") {
        ("NVLink 3 (A800)".into(), Some(200.0))
    } else if has("A100") && !has("PCIE") {
        ("NVLink 3".into(), Some(300.0))
    } else if has("V100") && !has("PCIE") {
        ("NVLink 2".into(), Some(150.0))
    } else if has("H100") || has("H200") || has("L40") || has("L4") {
        ("PCIe 5".into(), Some(64.0))
    } else if has("A100") || has("A10") || has("A30") || has("A40") || has("RTX") {
        ("PCIe 4".into(), Some(32.0))
    } else {
        ("PCIe".into(), Some(16.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranks::comm_ops::TimedBy;

    fn op(name: &str, inn: Option<u64>, out: Option<u64>, dtype: &str) -> CommOp {
        CommOp {
            name: name.into(),
            group: None,
            group_desc: None,
            group_ranks: vec![],
            group_size: Some(4),
            in_nelems: inn,
            out_nelems: out,
            dtype: Some(dtype.into()),
            in_split: vec![],
            out_split: vec![],
            issued_ns: 0,
            start_ns: 0,
            end_ns: 1,
            timed_by: TimedBy::Call,
            span: 0,
            lane: 0,
        }
    }

    #[test]
    fn nccl_tests_convention() {
        assert_eq!(bytes_of(&op("allreduce", Some(1000), Some(1000), "Float")), Ok(4000));
        assert_eq!(bytes_of(&op("_allgather_base", Some(250), Some(1000), "BFloat16")), Ok(2000));
        assert_eq!(bytes_of(&op("_reduce_scatter_base", Some(1000), Some(250), "Float")), Ok(4000));
        assert!(bytes_of(&op("allreduce", Some(1000), None, "Mystery")).unwrap_err().contains("Mystery"));
        assert!(bytes_of(&op("barrier", Some(0), Some(0), "Float")).is_err());
        assert!(bytes_of(&op("allreduce", Some(u64::MAX), None, "Double")).is_err());
        let (alg, bus) = bandwidth("all_reduce", 4, 4_000_000, 1_000_000).unwrap();
        assert!((alg - 4.0).abs() < 1e-12 && (bus - 6.0).abs() < 1e-12);
        assert_eq!(bandwidth("all_reduce", 4, 1, 0), None);
        assert_eq!(bus_factor("all_gather", 8), 7.0 / 8.0);
        assert_eq!(bus_factor("send", 2), 1.0);
    }
}
