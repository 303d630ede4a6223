//! Background work a pane waits for: the one way the UI runs something off its thread. The
//! job runs on its own thread and wakes the UI when done; the pane polls it each frame and
//! keeps whatever key says what the result is for.

use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::time::Instant;

pub struct Pending<T> {
    rx: Receiver<T>,
    pub started: Instant,
}

pub enum Poll<T> {
    Ready(T),
    Running,
    /// The job panicked or dropped its result.
    Lost,
}

impl<T: Send + 'static> Pending<T> {
    /// Runs `work` on a new thread; `wake` is called once its result is ready (a repaint).
    pub fn spawn(wake: impl FnOnce() + Send + 'static, work: impl FnOnce() -> T + Send + 'static) -> Pending<T> {
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let _ = tx.send(work());
            wake();
        });
        Pending { rx, started: Instant::now() }
    }

    /// Runs `work` on a new thread and repaints `ctx` when it is done.
    pub fn spawn_ui(ctx: &egui::Context, work: impl FnOnce() -> T + Send + 'static) -> Pending<T> {
        let c = ctx.clone();
        Pending::spawn(move || c.request_repaint(), work)
    }

    pub fn poll(&self) -> Poll<T> {
        match self.rx.try_recv() {
            Ok(v) => Poll::Ready(v),
            Err(TryRecvError::Empty) => Poll::Running,
            Err(TryRecvError::Disconnected) => Poll::Lost,
        }
    }

    /// Waits for the result (tests, benchmarks).
    pub fn wait(self) -> Option<T> {
        self.rx.recv().ok()
    }
}

/// Polls an optional job: takes its result out when ready, drops it when lost.
pub fn take_ready<K, T: Send + 'static>(slot: &mut Option<(K, Pending<T>)>) -> Option<(K, T)> {
    let (_, job) = slot.as_ref()?;
    match job.poll() {
        Poll::Ready(v) => slot.take().map(|(k, _)| (k, v)),
        Poll::Running => None,
        Poll::Lost => {
            *slot = None;
            None
        }
    }
}

/// The spinner and one-line text shown where a pane waits on a job. The spinner carries the
/// text as its accessible name: egui's own spinner has none, which a screen reader (and
/// kittest's accessibility check, while a slow job is still running) reports as unnamed.
pub fn busy_indicator(ui: &mut egui::Ui, text: &str) {
    ui.horizontal(|ui| {
        ui.spinner().widget_info(|| egui::WidgetInfo::labeled(egui::Role::ProgressIndicator, true, text));
        ui.weak(text);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_arrives_and_wakes() {
        let (tx, rx) = channel();
        let p = Pending::spawn(move || tx.send(()).unwrap(), || 6 * 7);
        rx.recv().unwrap();
        assert!(matches!(p.poll(), Poll::Ready(42)));
    }

    #[test]
    fn a_panicking_job_is_lost_not_waited_for() {
        let mut slot = Some(("k", Pending::spawn(|| {}, || -> i32 { panic!("boom") })));
        let t0 = Instant::now();
        while slot.is_some() && t0.elapsed().as_secs() < 10 {
            assert!(take_ready(&mut slot).is_none());
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(slot.is_none());
    }
}
