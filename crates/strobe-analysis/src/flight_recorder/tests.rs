use super::*;
use strobe_model::flight_recorder::{FrDump, FrEntry, FrState};

fn entry(seq: i64, op: &str, n: i64, state: FrState) -> FrEntry {
    FrEntry {
        record_id: seq,
        pg_id: 0,
        group: "0".into(),
        group_desc: "default_pg".into(),
        collective_seq_id: seq,
        p2p_seq_id: 0,
        op_id: seq,
        profiling_name: format!("nccl:{op}"),
        is_p2p: false,
        input_sizes: vec![vec![n]],
        input_dtypes: vec!["Float".into()],
        output_sizes: vec![vec![n]],
        output_dtypes: vec!["Float".into()],
        state,
        time_created_ns: seq,
        time_started_ns: None,
        time_completed_ns: None,
        duration_ms: None,
        timeout_ms: None,
        retired: None,
        thread_name: None,
        thread_id: None,
        frames: Vec::new(),
    }
}

fn dump(rank: u32, entries: Vec<FrEntry>) -> FrDump {
    FrDump { rank, version: "2.10".into(), entries, ..Default::default() }
}

#[test]
fn a_desync_names_the_odd_rank_and_the_majority() {
    use FrState::Completed as C;
    let dumps: Vec<FrDump> = (0..4)
        .map(|r| {
            let op = if r == 2 { "reduce_scatter" } else { "all_gather" };
            dump(r, vec![entry(1, "all_reduce", 8, C), entry(2, op, 8, FrState::Started)])
        })
        .collect();
    let rep = analyse(&dumps);
    assert_eq!(rep.mismatches.len(), 1);
    let m = &rep.mismatches[0];
    assert_eq!((m.kind.as_str(), m.seq, m.majority.as_str(), m.ranks.clone()), ("op", 2, "all_gather", vec![2]));
    assert_eq!(
        rep.last_completed_everywhere,
        vec![LastCompleted { group: "0".into(), seq: 1, op: "all_reduce".into() }]
    );
    assert_eq!(rep.stuck[0].seq, 2);
    assert_eq!(cell(&rep, Some(&dumps[2]), "0", 2, 2), Cell::Op);
    assert_eq!(cell(&rep, Some(&dumps[1]), "0", 2, 1), Cell::NotCompleted);
    assert!(to_text(&rep).contains("rank 2 called reduce_scatter, the other 3 all_gather"), "{}", to_text(&rep));
}

#[test]
fn a_pending_recv_is_listed_and_a_completed_send_is_not() {
    let mut recv = entry(2, "recv 0<-1", 32, FrState::Started);
    recv.is_p2p = true;
    recv.p2p_seq_id = 1;
    recv.collective_seq_id = 0;
    let mut send = recv.clone();
    send.profiling_name = "nccl:send 1->0".into();
    send.state = FrState::Completed;
    let dumps = vec![
        dump(0, vec![entry(1, "all_reduce", 8, FrState::Completed), recv]),
        dump(1, vec![entry(1, "all_reduce", 8, FrState::Completed), send]),
    ];
    let rep = analyse(&dumps);
    assert_eq!(rep.pending_p2p.len(), 1);
    assert_eq!((rep.pending_p2p[0].rank, rep.pending_p2p[0].entry.op.as_str()), (0, "recv 0<-1"));
    assert!(rep.mismatches.is_empty(), "p2p entries are not matched by sequence number");
    assert!(to_text(&rep).contains("rank 0: recv 0<-1 (p2p seq 1) on group 0, started, in [[32]] out [[32]]"));
}

#[test]
fn a_rank_behind_is_missing_and_one_the_buffer_dropped_is_not() {
    use FrState::Completed as C;
    let dumps = vec![
        dump(
            0,
            vec![
                entry(1, "all_reduce", 8, C),
                entry(2, "all_reduce", 8, C),
                entry(3, "all_reduce", 8, FrState::Started),
            ],
        ),
        // lost seq 1 to the ring buffer
        dump(1, vec![entry(2, "all_reduce", 8, C), entry(3, "all_reduce", 8, FrState::Started)]),
        dump(2, vec![entry(1, "all_reduce", 8, C), entry(2, "all_reduce", 8, C)]),
    ];
    let rep = analyse(&dumps);
    assert_eq!(rep.mismatches.len(), 1, "{:?}", rep.mismatches);
    assert_eq!((rep.mismatches[0].kind.as_str(), rep.mismatches[0].ranks.clone()), ("missing", vec![2]));
    assert_eq!(rep.stuck[0].not_arrived[0].last_seq, Some(2));
    assert_eq!(rep.last_completed_everywhere[0].seq, 2);
}
