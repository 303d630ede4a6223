//! A plane's lines walked by hand: each line's own fields (id, name, time base) and where
//! its events lie, cut into runs of about `RUN_BYTES` at field boundaries, without decoding
//! an event. The runs are what the workers decode (`planes`), so one long stream is prepared
//! in parallel and a plane is pushed a window of runs at a time, never held whole.

use super::wire::{self, Value};

/// A run of a line's events takes about this many bytes of the file.
pub const RUN_BYTES: usize = 256 << 10;

/// `XLine`'s own fields, and its fields' bytes cut into runs.
pub struct LineHead<'a> {
    pub id: i64,
    /// Its `display_name` where it has one, else its `name`.
    pub name: String,
    /// Every event's offset counts from this.
    pub timestamp_ns: i64,
    /// The line's fields in order, cut into runs: every event (field 4) lies whole in one.
    pub runs: Vec<&'a [u8]>,
    /// How many events it holds, aggregated ones included.
    pub events: usize,
}

/// The lines (`XPlane` field 3) of the plane `plane`, in order, up to the first field that
/// cannot be read (none: the plane decoded whole before this is asked).
pub fn plane_lines(plane: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < plane.len() {
        match wire::next(plane, &mut i, &wire::PLANE) {
            Ok((3, Value::Bytes(line))) => out.push(line),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    out
}

/// The line held in `line`: its fields read, its events counted and cut into runs. A field
/// that cannot be read is an error naming its byte in the line.
pub fn head(line: &[u8]) -> Result<LineHead<'_>, String> {
    let mut h = LineHead { id: 0, name: String::new(), timestamp_ns: 0, runs: Vec::new(), events: 0 };
    let (mut name, mut display): (&[u8], &[u8]) = (&[], &[]);
    let (mut i, mut run_start) = (0, 0);
    while i < line.len() {
        let (num, v) =
            wire::next(line, &mut i, &wire::LINE).map_err(|c| format!("at byte {} of the line: {}", c.at, c.what))?;
        match (num, v) {
            (1, Value::Varint(x)) => h.id = x as i64,
            (2, Value::Bytes(b)) => name = b,
            (3, Value::Varint(x)) => h.timestamp_ns = x as i64,
            (4, Value::Bytes(_)) => h.events += 1,
            (11, Value::Bytes(b)) => display = b,
            _ => {}
        }
        if i - run_start >= RUN_BYTES {
            h.runs.push(&line[run_start..i]);
            run_start = i;
        }
    }
    if run_start < line.len() {
        h.runs.push(&line[run_start..]);
    }
    h.name = super::messages::text(if display.is_empty() { name } else { display });
    Ok(h)
}

/// The events (field 4) of a run, in order, each as its bytes; or where the run stops making
/// sense (never, for a run `head` cut).
pub fn run_events(run: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < run.len() {
            match wire::next(run, &mut i, &wire::LINE) {
                Ok((4, Value::Bytes(e))) => return Some(e),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb_write::{field_bytes as bytes_field, field_varint};

    #[test]
    fn a_line_is_cut_into_runs_holding_every_event_whole() {
        let mut line = Vec::new();
        field_varint(1, 7, &mut line);
        bytes_field(2, b"Stream #14(Compute)", &mut line);
        field_varint(3, -5i64 as u64, &mut line);
        let event = vec![0x08u8; 1000];
        let n = 3 * RUN_BYTES / 1000;
        for _ in 0..n {
            bytes_field(4, &event, &mut line);
        }
        let h = head(&line).unwrap();
        assert_eq!((h.id, h.name.as_str(), h.timestamp_ns, h.events), (7, "Stream #14(Compute)", -5, n));
        assert!(h.runs.len() >= 3);
        assert_eq!(h.runs.iter().map(|r| r.len()).sum::<usize>(), line.len());
        let seen: usize = h.runs.iter().map(|r| run_events(r).filter(|e| e.len() == 1000).count()).sum();
        assert_eq!(seen, n);
    }

    #[test]
    fn a_cut_line_says_where() {
        let mut line = Vec::new();
        bytes_field(4, &[1, 2, 3], &mut line);
        line.extend_from_slice(&[0x22, 50, 1]);
        let e = head(&line).err().unwrap();
        assert!(e.contains("at byte 5"), "{e}");
    }
}
