//! Makes a large Nsight Systems export out of a real one, for the import benchmark:
//! copies IN to OUT and appends shifted copies of its activity rows (kernels, runtime and
//! driver calls, memcpy, memset, synchronization, NVTX) until the kernel table holds at least
//! `--kernels` rows. Copy k is shifted by k × (the trace's time span + 1 ms), and its
//! correlation ids by k × (the largest id + 1), so launches still pair with their GPU work.
//!
//! cargo run --release -p strobe-import --example scale_nsys -- IN.sqlite OUT.sqlite --kernels 1000000

use rusqlite::Connection;

const TABLES: [&str; 6] = [
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "NVTX_EVENTS",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut pos = Vec::new();
    let mut kernels: i64 = 1_000_000;
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--kernels" {
            kernels = args.get(i + 1).ok_or("--kernels needs a number")?.replace('_', "").parse()?;
            i += 2;
        } else {
            pos.push(args[i].clone());
            i += 1;
        }
    }
    let [input, output] = pos.as_slice() else {
        return Err("usage: scale_nsys IN.sqlite OUT.sqlite [--kernels N]".into());
    };
    let t0 = std::time::Instant::now();
    std::fs::copy(input, output)?;
    let c = Connection::open(output)?;
    c.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -262144;")?;
    let has = |t: &str| -> rusqlite::Result<bool> {
        c.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1", [t], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| n > 0)
    };
    let tables: Vec<&str> = TABLES.iter().copied().filter(|t| has(t).unwrap_or(false)).collect();
    if !tables.contains(&TABLES[0]) {
        return Err(format!("{input} has no kernel table").into());
    }
    let base: i64 = c.query_row(&format!("SELECT count(*) FROM {}", TABLES[0]), [], |r| r.get(0))?;
    if base == 0 {
        return Err(format!("{input} has no kernels").into());
    }
    let copies = (kernels + base - 1) / base - 1;
    // Time span and correlation range over all activity tables.
    let (mut t_min, mut t_max, mut corr_max) = (i64::MAX, i64::MIN, 0i64);
    let mut plans = Vec::new();
    for t in &tables {
        let cols: Vec<String> = {
            let mut st = c.prepare(&format!("PRAGMA table_info({t})"))?;
            let v = st.query_map([], |r| r.get::<_, String>(1))?.collect::<Result<_, _>>()?;
            v
        };
        let has_corr = cols.iter().any(|c| c == "correlationId");
        let (lo, hi, cm, rows): (Option<i64>, Option<i64>, Option<i64>, i64) = c.query_row(
            &format!(
                "SELECT min(start), max(coalesce(\"end\", start)), {}, max(rowid) FROM {t}",
                if has_corr { "max(correlationId)" } else { "NULL" }
            ),
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get::<_, Option<i64>>(3)?.unwrap_or(0))),
        )?;
        t_min = t_min.min(lo.unwrap_or(i64::MAX));
        t_max = t_max.max(hi.unwrap_or(i64::MIN));
        corr_max = corr_max.max(cm.unwrap_or(0));
        let select: Vec<String> = cols
            .iter()
            .map(|col| match col.as_str() {
                "start" | "end" => format!("\"{col}\" + ?1"),
                "correlationId" => "CASE WHEN correlationId = 0 THEN 0 ELSE correlationId + ?2 END".to_string(),
                _ => format!("\"{col}\""),
            })
            .collect();
        let quoted: Vec<String> = cols.iter().map(|c| format!("\"{c}\"")).collect();
        let sql = format!(
            "INSERT INTO {t} ({}) SELECT {} FROM {t} WHERE rowid <= {rows}",
            quoted.join(", "),
            select.join(", ")
        );
        plans.push((t.to_string(), sql, has_corr));
    }
    let shift = t_max - t_min + 1_000_000;
    let corr_step = corr_max + 1;
    if corr_step.checked_mul(copies + 1).is_none_or(|v| v > u32::MAX as i64) {
        return Err("correlation ids would overflow 32 bits; ask for fewer kernels".into());
    }
    c.execute_batch("BEGIN")?;
    for k in 1..=copies {
        for (_, sql, has_corr) in &plans {
            if *has_corr {
                c.execute(sql, [k * shift, k * corr_step])?;
            } else {
                c.execute(sql, [k * shift])?;
            }
        }
    }
    c.execute_batch("COMMIT")?;
    println!("{input} → {output}: {} copies of the activity rows, each shifted by {shift} ns", copies + 1);
    for (t, _, _) in &plans {
        let n: i64 = c.query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))?;
        println!("  {t}: {n} rows");
    }
    drop(c);
    let size = std::fs::metadata(output)?.len();
    println!("  {:.1} MB, written in {:.1} s", size as f64 / 1e6, t0.elapsed().as_secs_f64());
    Ok(())
}
