//! The selected cell's entry: what the rank recorded at that sequence number of the group,
//! beside what the matching said about it.

use strobe_analysis::flight_recorder::{mismatch_sentence, FrReport, GroupSummary};
use strobe_model::flight_recorder::FrDump;

fn time(ns: Option<i64>) -> String {
    ns.map_or_else(|| "—".into(), |t| format!("{t} ns"))
}

pub fn show(ui: &mut egui::Ui, report: &FrReport, g: &GroupSummary, dumps: &[FrDump], rank: u32, seq: i64) {
    ui.label(egui::RichText::new(format!("rank {rank}, seq {seq} on group {}", g.name)).strong());
    for m in report.mismatches.iter().filter(|m| !m.p2p && m.group == g.name && m.seq == seq) {
        ui.colored_label(super::grid::kind_colour(&m.kind), mismatch_sentence(m));
    }
    let Some(dump) = dumps.iter().find(|d| d.rank == rank) else {
        ui.weak("no dump from this rank is open");
        return;
    };
    let Some(e) = dump.entries.iter().find(|e| e.group == g.name && !e.is_p2p && e.collective_seq_id == seq) else {
        let last = dump.entries.iter().filter(|e| e.group == g.name && !e.is_p2p).map(|e| e.collective_seq_id).max();
        ui.label(match last {
            Some(l) if l < seq => format!("no entry: the rank's last collective on this group is seq {l}"),
            Some(_) => "no entry: the rank's ring buffer no longer holds it".into(),
            None => "no entry: the rank recorded nothing on this group".into(),
        });
        return;
    };
    egui::Grid::new("fr_entry").num_columns(2).striped(true).show(ui, |ui| {
        let mut row = |k: &str, v: String| {
            ui.label(k);
            ui.label(v);
            ui.end_row();
        };
        row("op", e.profiling_name.clone());
        row("state", e.state.as_str().to_string());
        row("completed (matching)", strobe_analysis::flight_recorder::completed(dump, e).to_string());
        row("record id / op id", format!("{} / {}", e.record_id, e.op_id));
        row("p2p seq", e.p2p_seq_id.to_string());
        row("input sizes", format!("{:?} {:?}", e.input_sizes, e.input_dtypes));
        row("output sizes", format!("{:?} {:?}", e.output_sizes, e.output_dtypes));
        row("created", time(Some(e.time_created_ns)));
        row("started", time(e.time_started_ns));
        row("completed", time(e.time_completed_ns));
        row("duration", e.duration_ms.map_or_else(|| "—".into(), |d| format!("{d:.3} ms")));
        row("timeout", e.timeout_ms.map_or_else(|| "—".into(), |t| format!("{t} ms")));
        if let Some(t) = &e.thread_name {
            row("thread", format!("{t} ({})", e.thread_id.as_deref().unwrap_or("?")));
        }
    });
    // the name only: the folder is the user's (and the path is on hover)
    let name = std::path::Path::new(&dump.path).file_name().map(|n| n.to_string_lossy().to_string());
    ui.label(format!("dump: {}", name.unwrap_or_default())).on_hover_text(&dump.path);
    if !e.frames.is_empty() {
        ui.label(egui::RichText::new("Python frames").strong());
        for f in &e.frames {
            ui.monospace(format!("{} at {}:{}", f.name, f.filename, f.line));
        }
    }
}
