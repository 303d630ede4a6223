//! The headline figures (idle %, its breakdown, comm overlap per GPU): what the summary strip
//! and the top of `strobe report` say first. They cover the part of the trace the user
//! profiled for: the steps (first step start to last step end) where there are steps, else
//! the `cudaProfilerStart`/`Stop` capture range, else the whole trace. An Nsight Systems run
//! traces from process start, so seconds of CUDA init and warm-up before the first step would
//! otherwise decide "idle 96 %" of a GPU that is busy 78 % of each step; Nsight Systems
//! itself opens such a report on its capture range, and HTA measures per step.
//!
//! The definitions are those of the whole-trace figures (`gpu_time`, `idle`), clipped to the
//! window: busy is the device's busy union inside it, idle the rest, and the idle breakdown
//! counts each gap's part inside it under the whole gap's cause (`idle::idle_totals_within`).

use crate::gpu_time::{gpu_time_of, DeviceUnions};
use crate::idle::{idle_totals_of, idle_totals_within, DeviceIdle};
use crate::intervals::total_within;
use crate::report::fmt_ns;
use crate::steps::{steps_window, CaptureRange, Step};
use serde::Serialize;
use strobe_store::Store;

/// Which part of the trace the headline covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Covers {
    /// First step start to last step end.
    Steps,
    /// The `cudaProfilerStart`/`Stop` range (no steps found inside it).
    Capture,
    /// Each device's first GPU operation to its last (no steps, no capture range).
    #[default]
    Trace,
}

/// One device's headline figures over the window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HeadlineDevice {
    pub device: i64,
    pub window_ns: i64,
    pub busy_ns: i64,
    pub idle_ns: i64,
    pub idle_pct: f64,
    pub threshold_ns: i64,
    pub host_wait_ns: i64,
    pub kernel_wait_ns: i64,
    pub other_ns: i64,
    /// Gaps at least the threshold long that reach into the window.
    pub long_gaps: u64,
    pub comm_ns: i64,
    pub comm_overlapped_ns: i64,
    pub overlap_pct: f64,
}

impl HeadlineDevice {
    pub fn pct_of_idle(&self, ns: i64) -> f64 {
        if self.idle_ns > 0 {
            ns as f64 * 100.0 / self.idle_ns as f64
        } else {
            0.0
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Headline {
    pub covers: Covers,
    /// How many steps the window holds (0 unless `covers` is steps).
    pub steps: usize,
    /// The window (None for the whole trace: each device's own first-to-last).
    pub start_ns: Option<i64>,
    pub end_ns: Option<i64>,
    pub devices: Vec<HeadlineDevice>,
}

impl Headline {
    /// What the figures cover, as the strip and the report say it: "over 3 steps, 41.2 ms",
    /// "over the capture range, 2.1 s", "over the whole trace".
    pub fn scope_text(&self) -> String {
        let len = match (self.start_ns, self.end_ns) {
            (Some(a), Some(b)) => fmt_ns(b - a),
            _ => String::new(),
        };
        match self.covers {
            Covers::Steps => format!("over {} step{}, {len}", self.steps, if self.steps == 1 { "" } else { "s" }),
            Covers::Capture => format!("over the capture range, {len}"),
            Covers::Trace => "over the whole trace".to_string(),
        }
    }

    pub fn device(&self, device: i64) -> Option<&HeadlineDevice> {
        self.devices.iter().find(|d| d.device == device)
    }
}

/// The window the headline covers and what it is: the steps, else the capture range (its
/// open end, and any end past the GPU work, cut at the last GPU operation), else none.
pub fn headline_window(
    steps: &[Step],
    capture: Option<&CaptureRange>,
    unions: &[DeviceUnions],
) -> Option<(Covers, i64, i64)> {
    if let Some((a, b)) = steps_window(steps) {
        return Some((Covers::Steps, a, b));
    }
    let c = capture?;
    let last = unions.iter().filter(|u| !u.busy.is_empty()).map(|u| u.counts.end_ns).max()?;
    let end = c.end_ns.min(last);
    (end > c.start_ns).then_some((Covers::Capture, c.start_ns, end))
}

/// The headline figures of every device, gaps judged against `threshold_ns`.
pub fn headline_of(
    store: &Store,
    unions: &[DeviceUnions],
    steps: &[Step],
    capture: Option<&CaptureRange>,
    threshold_ns: i64,
) -> Headline {
    let Some((covers, a, b)) = headline_window(steps, capture, unions) else {
        let idle = idle_totals_of(store, unions, threshold_ns);
        let devices = gpu_time_of(unions)
            .iter()
            .zip(&idle)
            .map(|(g, d)| device(g.device, g.window_ns, g.busy_ns, d, g.comm_ns, g.comm_overlapped_ns))
            .collect();
        return Headline { covers: Covers::Trace, steps: 0, start_ns: None, end_ns: None, devices };
    };
    let idle = idle_totals_within(store, unions, threshold_ns, (a, b));
    let devices = unions
        .iter()
        .zip(&idle)
        .map(|(u, d)| {
            let busy = total_within(&u.busy, a, b);
            let (comm, ov) = (total_within(&u.comm, a, b), total_within(&u.overlapped, a, b));
            device(u.device, b - a, busy, d, comm, ov)
        })
        .collect();
    let n = if covers == Covers::Steps { steps.len() } else { 0 };
    Headline { covers, steps: n, start_ns: Some(a), end_ns: Some(b), devices }
}

fn device(dev: i64, window: i64, busy: i64, d: &DeviceIdle, comm: i64, ov: i64) -> HeadlineDevice {
    let pct = |x: i64, of: i64| if of > 0 { x as f64 * 100.0 / of as f64 } else { 0.0 };
    HeadlineDevice {
        device: dev,
        window_ns: window,
        busy_ns: busy,
        idle_ns: window - busy,
        idle_pct: pct(window - busy, window),
        threshold_ns: d.threshold_ns,
        host_wait_ns: d.host_wait_ns,
        kernel_wait_ns: d.kernel_wait_ns,
        other_ns: d.other_ns,
        long_gaps: d.long_gaps,
        comm_ns: comm,
        comm_overlapped_ns: ov,
        overlap_pct: pct(ov, comm),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::StepSource;

    fn unions(busy: Vec<(i64, i64)>) -> Vec<DeviceUnions> {
        let counts = crate::gpu_time::ActivityCounts {
            start_ns: busy.first().map_or(0, |b| b.0),
            end_ns: busy.last().map_or(0, |b| b.1),
            kernels: busy.len() as u64,
            memcpy: 0,
            memset: 0,
        };
        vec![DeviceUnions {
            device: 0,
            busy_edges: vec![(0, 0); busy.len()],
            compute: busy.clone(),
            busy,
            comm: Vec::new(),
            memory: Vec::new(),
            overlapped: Vec::new(),
            counts,
        }]
    }

    #[test]
    fn the_window_is_the_steps_else_the_capture_range_cut_at_the_gpu_work() {
        let u = unions(vec![(0, 100), (1_000, 2_000)]);
        let step = |s, d| Step { name: "step".into(), start_ns: s, dur_ns: d, source: StepSource::Nvtx };
        let cap = CaptureRange { start_ns: 900, end_ns: i64::MAX, starts: 1, stops: 0 };
        assert_eq!(
            headline_window(&[step(950, 100), step(1_100, 500)], Some(&cap), &u),
            Some((Covers::Steps, 950, 1_600))
        );
        assert_eq!(headline_window(&[], Some(&cap), &u), Some((Covers::Capture, 900, 2_000)));
        let stopped = CaptureRange { end_ns: 1_500, ..cap.clone() };
        assert_eq!(headline_window(&[], Some(&stopped), &u), Some((Covers::Capture, 900, 1_500)));
        assert_eq!(headline_window(&[], None, &u), None);
        // a capture range past all GPU work covers nothing: the whole trace then
        let late = CaptureRange { start_ns: 5_000, ..cap };
        assert_eq!(headline_window(&[], Some(&late), &u), None);
    }
}
