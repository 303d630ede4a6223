//! Memory workload of one launch, as ncu's Memory Workload Analysis shows it.
//!
//! - hit rates: `l1tex__t_sector_hit_rate.pct`, `lts__t_sector_hit_rate.pct`;
//! - DRAM: `dram__bytes_read.sum`, `dram__bytes_write.sum`, `dram__bytes.sum.per_second`,
//!   and the DRAM throughput % (`roofline::DRAM_PCT`);
//! - shared memory bank conflicts: `l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum`;
//! - the memory chart's main flows, kernel → L1/TEX → L2 → DRAM, each as bytes and % of the
//!   link's peak where the report has them: global loads and stores at L1
//!   (`l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum` × 32-byte sectors), L2 → L1 reads
//!   (`l1tex__m_xbar2l1tex_read_bytes.sum`), L1 → L2 writes
//!   (`l1tex__m_l1tex2xbar_write_bytes.sum`), DRAM → L2 reads and L2 → DRAM writes
//!   (`dram__bytes_{read,write}.sum`), each with its `.pct_of_peak_sustained_elapsed`.

use strobe_model::ncu::NcuLaunch;

/// Bytes per L1/L2 sector.
///
/// A flow goes the way its data goes: loads and reads towards the kernel, stores and writes
/// towards DRAM.
const SECTOR_BYTES: f64 = 32.0;

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MemoryFlow {
    /// Where the data comes from and goes to: `kernel`, `L1`, `L2`, `DRAM`.
    pub from: &'static str,
    pub to: &'static str,
    /// What the flow is (`global loads`, `reads`, `writes`).
    pub what: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pct_of_peak: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct MemoryWorkload {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l1_hit_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l2_hit_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dram_read_bytes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dram_write_bytes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dram_bytes_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dram_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_bank_conflicts: Option<f64>,
    /// L1/TEX and L2 throughput, % of peak (the chart's unit boxes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l1_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l2_pct: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<MemoryFlow>,
}

fn flow(
    l: &NcuLaunch,
    from: &'static str,
    to: &'static str,
    what: &'static str,
    bytes: Option<f64>,
    pct_id: &str,
) -> Option<MemoryFlow> {
    let pct = l.value(pct_id);
    (bytes.is_some() || pct.is_some()).then_some(MemoryFlow { from, to, what, bytes, pct_of_peak: pct })
}

pub fn memory(l: &NcuLaunch) -> Option<MemoryWorkload> {
    let sectors =
        |op: &str| l.value(&format!("l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum")).map(|s| s * SECTOR_BYTES);
    let read = l.value("dram__bytes_read.sum");
    let write = l.value("dram__bytes_write.sum");
    let flows: Vec<MemoryFlow> = [
        flow(
            l,
            "L1",
            "kernel",
            "global loads",
            sectors("ld"),
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum.pct_of_peak_sustained_elapsed",
        ),
        flow(
            l,
            "kernel",
            "L1",
            "global stores",
            sectors("st"),
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum.pct_of_peak_sustained_elapsed",
        ),
        flow(
            l,
            "L2",
            "L1",
            "reads",
            l.value("l1tex__m_xbar2l1tex_read_bytes.sum"),
            "l1tex__m_xbar2l1tex_read_bytes.sum.pct_of_peak_sustained_elapsed",
        ),
        flow(
            l,
            "L1",
            "L2",
            "writes",
            l.value("l1tex__m_l1tex2xbar_write_bytes.sum"),
            "l1tex__m_l1tex2xbar_write_bytes.sum.pct_of_peak_sustained_elapsed",
        ),
        flow(l, "DRAM", "L2", "reads", read, "dram__bytes_read.sum.pct_of_peak_sustained_elapsed"),
        flow(l, "L2", "DRAM", "writes", write, "dram__bytes_write.sum.pct_of_peak_sustained_elapsed"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let m = MemoryWorkload {
        l1_hit_pct: l.value("l1tex__t_sector_hit_rate.pct"),
        l2_hit_pct: l.value("lts__t_sector_hit_rate.pct"),
        dram_read_bytes: read,
        dram_write_bytes: write,
        dram_bytes_per_s: l.value("dram__bytes.sum.per_second"),
        dram_pct: l.first_value(&crate::roofline::DRAM_PCT),
        shared_bank_conflicts: l.value("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"),
        l1_pct: l.first_value(&crate::roofline::L1_PCT),
        l2_pct: l.value(crate::roofline::L2_PCT),
        flows,
    };
    // The SOL percentages alone (every export has them) are not a memory workload.
    let sol_only =
        MemoryWorkload { dram_pct: m.dram_pct, l1_pct: m.l1_pct, l2_pct: m.l2_pct, ..MemoryWorkload::default() };
    (m != sol_only).then_some(m)
}
