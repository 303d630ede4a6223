//! The native `.ncu-rep` reader against ncu's own `--csv --page raw` export of the same
//! report (made with `ncu --import X --csv --page raw`, ncu 2025.3.1), read by the CSV path:
//! the same launches, names, grid/block, device, CC and every metric value, to the
//! precision the export printed. Plus corrupt and truncated reports.

mod common;
use common::*;
use std::io::Write;
use strobe_analysis::ncu_match::kernel_match_key;
use strobe_analysis::roofline::analyse;
use strobe_import::{detect, ncu_csv, ncu_rep, Format};
use strobe_model::ncu::{NcuLayout, NcuMetric, NcuReport};

/// Report and ncu's raw export of it.
const PAIRS: [(&str, &str); 2] =
    [("ncu_esmm.ncu-rep", "ncu_esmm.raw.csv"), ("ncu_flashattn_a30.ncu-rep", "ncu_flashattn_a30.raw.csv")];

fn native(name: &str) -> NcuReport {
    ncu_rep::import_native(&sample(name)).unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

fn exported(name: &str) -> NcuReport {
    ncu_csv::import(&sample(name)).unwrap_or_else(|e| panic!("{e}"))
}

/// How far the export's text may be from the exact value: half a unit of the last digit it
/// printed, in base units (`139.914240 ms` → ±0.5 ns), or 1e-6 relative if that is looser.
fn tolerance(m: &NcuMetric) -> f64 {
    let text = m.raw.replace(',', "");
    let decimals = text.split_once('.').map(|(_, d)| d.len()).unwrap_or(0) as i32;
    let (factor, _) = ncu_csv::normalise_unit(&m.raw_unit);
    let printed = 0.5 * 10f64.powi(-decimals) * factor;
    printed.max(1e-6 * m.value.unwrap_or(0.0).abs())
}

/// ncu's CSV may shorten a long demangled name (drop namespace qualifiers); it never adds
/// text and never changes the function's own identifier.
fn same_kernel_name(native: &str, csv: &str) -> bool {
    if native == csv {
        return true;
    }
    let mut it = native.chars();
    let subsequence = csv.chars().all(|c| it.any(|n| n == c));
    subsequence && kernel_match_key(native) == kernel_match_key(csv)
}

#[test]
fn launches_and_metrics_equal_ncus_raw_export() {
    for (rep, csv) in PAIRS {
        let (n, c) = (native(rep), exported(csv));
        assert_eq!(n.layout, NcuLayout::Raw);
        assert_eq!(n.launches.len(), c.launches.len(), "{rep}: launches");
        let (mut values, mut units) = (0, 0);
        for (a, b) in n.launches.iter().zip(&c.launches) {
            let w = format!("{rep} launch {}", b.id);
            assert_eq!(a.id, b.id, "{w}");
            assert!(same_kernel_name(&a.name, &b.name), "{w}: name {:?} vs ncu's {:?}", a.name, b.name);
            assert_eq!(
                (a.process_id, &a.process, &a.host, a.context, a.stream),
                (b.process_id, &b.process, &b.host, b.context, b.stream),
                "{w}"
            );
            assert_eq!((a.grid, a.block, a.device, &a.cc), (b.grid, b.block, b.device, &b.cc), "{w}");
            let names_a: Vec<&String> = a.metrics.keys().collect();
            let names_b: Vec<&String> = b.metrics.keys().collect();
            assert_eq!(names_a, names_b, "{w}: metric names");
            for (k, mb) in &b.metrics {
                let ma = &a.metrics[k];
                match (ma.value, mb.value) {
                    (None, None) => {
                        assert!(mb.raw.is_empty() || ma.raw == mb.raw, "{w} {k}: {:?} vs {:?}", ma.raw, mb.raw)
                    }
                    (Some(x), Some(y)) => {
                        assert!(
                            (x - y).abs() <= tolerance(mb),
                            "{w} {k}: {x} vs ncu's {y} ({} {})",
                            mb.raw,
                            mb.raw_unit
                        );
                        values += 1;
                    }
                    // The report holds NaN (a launch ncu failed to profile): ncu prints
                    // `nan`, `-nan` or, for some metrics, `0`; Strobe keeps no value.
                    (None, Some(_)) if ma.raw.ends_with("nan") => {}
                    _ => panic!("{w} {k}: {:?} {:?} vs ncu's {:?} ({:?})", ma.value, ma.raw, mb.value, mb.raw),
                }
                // The name-derived unit, where there is one, is ncu's.
                if !ma.unit.is_empty() && !mb.unit.is_empty() {
                    assert_eq!(ma.unit, mb.unit, "{w} {k}: unit");
                    units += 1;
                }
            }
        }
        assert!(values > 100 * n.launches.len() && units > 0, "{rep}: {values} values, {units} units compared");
    }
}

/// What `strobe report` and the kernel pane show: the roofline analysis of both.
#[test]
fn roofline_figures_equal_those_from_the_export() {
    for (rep, csv) in PAIRS {
        let (a, b) = (analyse(&native(rep)), analyse(&exported(csv)));
        assert_eq!(a.kernels.len(), b.kernels.len());
        assert_eq!(
            (&a.device.name, &a.device.cc, &a.device.peaks_source),
            (&b.device.name, &b.device.cc, &b.device.peaks_source),
            "{rep}: device"
        );
        let close = |x: Option<f64>, y: Option<f64>, what: &str| match (x, y) {
            (None, None) => {}
            // The export rounds each metric to 6 decimals of its display unit (percentages to
            // 1e-6 %): a figure derived from them agrees to about that.
            (Some(x), Some(y)) => assert!((x - y).abs() <= 1e-5 * y.abs().max(1.0), "{rep} {what}: {x} vs {y}"),
            _ => panic!("{rep} {what}: {x:?} vs {y:?}"),
        };
        for (x, y) in a.kernels.iter().zip(&b.kernels) {
            let w = format!("launch {}", y.id);
            assert_eq!(x.duration_ns, y.duration_ns, "{rep} {w}: duration_ns");
            close(x.sm_pct, y.sm_pct, &format!("{w} sm_pct"));
            close(x.memory_pct, y.memory_pct, &format!("{w} memory_pct"));
            close(x.dram_pct, y.dram_pct, &format!("{w} dram_pct"));
            close(x.flops_per_s, y.flops_per_s, &format!("{w} flops_per_s"));
            close(x.dram_bytes, y.dram_bytes, &format!("{w} dram_bytes"));
            assert_eq!(x.verdict, y.verdict, "{rep} {w}: verdict");
        }
    }
}

#[test]
fn gzipped_and_renamed_reports_are_detected_and_read() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(sample("ncu_esmm.ncu-rep")).unwrap();
    let gz = dir.path().join("profile.ncu-rep.gz");
    let mut e = flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
    e.write_all(&bytes).unwrap();
    e.finish().unwrap();
    // Content decides, not the name.
    let plain_odd = dir.path().join("profile.bin");
    std::fs::write(&plain_odd, &bytes).unwrap();
    let gz_odd = dir.path().join("profile.gz");
    std::fs::copy(&gz, &gz_odd).unwrap();
    let want = native("ncu_esmm.ncu-rep");
    for p in [&gz, &plain_odd, &gz_odd] {
        assert_eq!(detect(p).unwrap(), Some(Format::NcuRep), "{}", p.display());
        assert_eq!(ncu_rep::import(p).unwrap(), want, "{}", p.display());
    }
}

/// Cuts at many offsets (all of the first 4 KiB, then every 211th byte, and the last bytes):
/// each is an error naming the file and a byte offset, never a panic.
#[test]
fn truncated_reports_are_clean_errors() {
    let bytes = std::fs::read(sample("ncu_esmm.ncu-rep")).unwrap();
    let mut cuts: Vec<usize> = (0..4096).chain((4096..bytes.len()).step_by(211)).collect();
    cuts.extend(bytes.len() - 64..bytes.len());
    for n in cuts {
        let e = ncu_rep::parse(&bytes[..n]).unwrap_err();
        assert!(e.contains("at byte ") || e.contains("NVR"), "cut at {n}: {e}");
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cut.ncu-rep");
    std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
    let e = ncu_rep::import(&p).unwrap_err().to_string();
    assert!(e.contains("cut.ncu-rep") && e.contains("at byte "), "{e}");
}

fn import_bytes(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.ncu-rep");
    std::fs::write(&p, bytes).unwrap();
    match ncu_rep::import_native(&p) {
        Ok(_) => panic!("read a corrupt report"),
        Err(ncu_rep::Refusal::Error(e)) => e.to_string(),
        Err(ncu_rep::Refusal::Unsupported(s)) => format!("unsupported: {s}"),
    }
}

#[test]
fn corrupt_reports_are_clean_errors() {
    let good = std::fs::read(sample("ncu_esmm.ncu-rep")).unwrap();
    // No magic.
    let mut b = good.clone();
    b[0] = b'X';
    let e = import_bytes(&b);
    assert!(e.contains("bad.ncu-rep") && e.contains("NVR"), "{e}");
    // A huge file-header length, then a huge block-header length: refused, not allocated.
    let mut b = good.clone();
    b[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = import_bytes(&b);
    assert!(e.contains("at byte 4") && e.contains("runs past the end"), "{e}");
    let first_block = 8 + u32::from_le_bytes(good[4..8].try_into().unwrap()) as usize;
    let mut b = good.clone();
    b[first_block..first_block + 4].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    let e = import_bytes(&b);
    assert!(e.contains(&format!("at byte {first_block}")) && e.contains("block header"), "{e}");
    // A wrong wire type: the first block header's field 1 (a varint) as a 32-bit field.
    let key = first_block + 4;
    assert_eq!(good[key], 0x08, "BlockHeader field 1, varint");
    let mut b = good.clone();
    b[key] = 0x0d;
    let e = import_bytes(&b);
    assert!(e.contains("wire type") && e.contains("at byte"), "{e}");
    // An unknown FileHeader version is refused as unsupported (ncu --import may read it).
    assert_eq!(&good[8..10], &[0x08, 0x07], "FileHeader.Version = 7");
    let mut b = good.clone();
    b[9] = 0x63;
    let e = import_bytes(&b);
    assert!(e.starts_with("unsupported:") && e.contains("version 99"), "{e}");
    // Garbage after the magic.
    let mut b = b"NVR\0".to_vec();
    b.extend(std::iter::repeat_n(0xff, 64));
    let e = import_bytes(&b);
    assert!(e.contains("at byte"), "{e}");
}
