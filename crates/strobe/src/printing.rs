//! A report printed while it is still being rendered. A several-rank report of every step is
//! about 100 MB of JSON: rendered whole and then printed, the pipe's reader waited for the
//! whole rendering and then for the copy through the pipe, one after the other. Here each
//! block goes to a printing thread as soon as it is full, so the copy runs beside the
//! rendering, and the blocks are kept for the report's memo.

use std::io::Write;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

/// Bytes handed to the printing thread at a time.
const BLOCK: usize = 1 << 20;

/// What was printed, in the blocks it was printed in.
#[derive(Default)]
pub struct Answer {
    blocks: Vec<Arc<[u8]>>,
}

impl Answer {
    pub fn blocks(&self) -> impl Iterator<Item = &[u8]> {
        self.blocks.iter().map(|b| &b[..])
    }
}

impl From<String> for Answer {
    fn from(s: String) -> Answer {
        Answer { blocks: vec![Arc::from(s.into_bytes())] }
    }
}

/// Renders `r` as JSON (`json`, indented or not as `crate::json_indented` says) or as the text
/// `to_text` makes of it, and prints it to stdout as it goes.
pub fn print_rendered<T: serde::Serialize>(
    json: bool,
    r: &T,
    to_text: impl Fn(&T) -> String,
) -> anyhow::Result<Answer> {
    if !json {
        let out = to_text(r);
        print!("{out}");
        return Ok(out.into());
    }
    let (tx, rx) = sync_channel::<Arc<[u8]>>(4);
    std::thread::scope(|s| {
        s.spawn(move || print_blocks(rx));
        let mut w = Blocks { done: Vec::new(), cur: Vec::with_capacity(BLOCK), to_print: Some(tx) };
        match crate::json_indented() {
            true => serde_json::to_writer_pretty(&mut w, r)?,
            false => serde_json::to_writer(&mut w, r)?,
        }
        w.cur.push(b'\n');
        w.pass_on();
        // the sender goes here: the printing thread prints what is left and ends
        Ok(Answer { blocks: w.done })
    })
}

/// Prints each block as it comes. A failed write (the reader went away) ends the printing;
/// the rendering goes on unprinted, for the memo.
fn print_blocks(rx: Receiver<Arc<[u8]>>) {
    let mut out = std::io::stdout().lock();
    for b in rx {
        if out.write_all(&b).is_err() {
            return;
        }
    }
    let _ = out.flush();
}

/// The writer the rendering writes into: full blocks go to the printing thread and are kept.
struct Blocks {
    done: Vec<Arc<[u8]>>,
    cur: Vec<u8>,
    to_print: Option<SyncSender<Arc<[u8]>>>,
}

impl Blocks {
    fn pass_on(&mut self) {
        if self.cur.is_empty() {
            return;
        }
        let b: Arc<[u8]> = Arc::from(std::mem::replace(&mut self.cur, Vec::with_capacity(BLOCK)));
        if let Some(tx) = &self.to_print {
            if tx.send(b.clone()).is_err() {
                self.to_print = None;
            }
        }
        self.done.push(b);
    }
}

impl Write for Blocks {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.cur.extend_from_slice(buf);
        if self.cur.len() >= BLOCK {
            self.pass_on();
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_blocks_hold_the_rendering_whole() {
        // several blocks' worth, so the rendering crosses block boundaries
        let v: Vec<String> = (0..300_000).map(|i| format!("item {i}")).collect();
        let mut w = Blocks { done: Vec::new(), cur: Vec::new(), to_print: None };
        serde_json::to_writer(&mut w, &v).unwrap();
        w.pass_on();
        assert!(w.done.len() > 2);
        let joined: Vec<u8> = Answer { blocks: w.done }.blocks().flatten().copied().collect();
        assert_eq!(joined, serde_json::to_vec(&v).unwrap());
    }
}
