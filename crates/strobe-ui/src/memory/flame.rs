//! A flame graph of the bytes alive at one position by stack (memory_viz's `memory` view):
//! the outermost frame on top, each frame as wide as the bytes allocated under it, down to the
//! first user frame (the allocator's, dispatcher's and interpreter's frames left out), coloured
//! by the category holding most of its bytes. Click a frame to zoom into it, click the top row
//! to zoom out.

use super::breakdown_view::category_color;
use std::collections::HashMap as FxHashMap;
use strobe_analysis::memory::categories::{Category, Classifier};
use strobe_analysis::memory::frames::{first_user_frame, short_name};
use strobe_analysis::memory::{bytes, AllocationTimeline};
use strobe_model::memory::{Frame, MemorySnapshot, StackId};

#[derive(Clone, Debug)]
pub struct FlameNode {
    pub label: String,
    pub bytes: i64,
    pub count: usize,
    per_category: [i64; 7],
    pub children: Vec<usize>,
}

impl FlameNode {
    pub fn category(&self) -> Category {
        Category::ALL
            .iter()
            .copied()
            .max_by_key(|&c| (self.per_category[c as usize], -(c as i64)))
            .unwrap_or(Category::Other)
    }
}

/// The tree: node 0 is every byte alive at `position`.
#[derive(Clone, Debug, Default)]
pub struct Flame {
    pub position: usize,
    pub nodes: Vec<FlameNode>,
}

fn frame_label(f: &Frame) -> String {
    if f.filename.is_empty() || f.filename == "??" {
        short_name(&f.name).to_string()
    } else {
        let file = f.filename.rsplit('/').next().unwrap_or(&f.filename);
        format!("{} {file}:{}", short_name(&f.name), f.line)
    }
}

/// The frames a stack is drawn as, outermost first. With Python frames: those, down to the
/// first user frame (the interpreter's C++ frames say nothing a reader wants, and torch's
/// unwinder names many of them wrongly). Without (the autograd engine's threads, C++ callers):
/// the first user frame under one shared parent.
fn stack_path(s: &MemorySnapshot, stack: StackId) -> Vec<String> {
    let frames: Vec<&Frame> = s.stack(stack).collect();
    let Some(u) = first_user_frame(&frames) else { return vec!["(no stack)".into()] };
    if frames[u].filename.ends_with(".py") {
        frames[u..].iter().filter(|f| f.filename.ends_with(".py")).map(|f| frame_label(f)).rev().collect()
    } else {
        vec!["(no Python frames)".into(), frame_label(frames[u])]
    }
}

impl Flame {
    pub fn build(s: &MemorySnapshot, tl: &AllocationTimeline, c: &Classifier, position: usize) -> Flame {
        let node = |label: String| FlameNode { label, bytes: 0, count: 0, per_category: [0; 7], children: Vec::new() };
        let mut f = Flame { position, nodes: vec![node("all".into())] };
        let mut child: FxHashMap<(usize, String), usize> = FxHashMap::new();
        let mut paths: FxHashMap<u32, Vec<String>> = FxHashMap::new();
        let mut alive = Vec::new();
        tl.alive_at(position, |i| alive.push(i));
        for i in alive {
            let a = &tl.allocs[i];
            let cat = c.rule(a).category();
            let path = paths.entry(a.stack).or_insert_with(|| stack_path(s, a.stack));
            let mut at = 0;
            for label in std::iter::once(None).chain(path.iter().map(Some)) {
                if let Some(label) = label {
                    let key = (at, label.clone());
                    at = match child.get(&key) {
                        Some(&n) => n,
                        None => {
                            let n = f.nodes.len();
                            f.nodes.push(node(label.clone()));
                            f.nodes[at].children.push(n);
                            child.insert(key, n);
                            n
                        }
                    };
                }
                let n = &mut f.nodes[at];
                n.bytes += a.size as i64;
                n.count += 1;
                n.per_category[cat as usize] += a.size as i64;
            }
        }
        // largest first, so the widest frames sit left
        let order: Vec<Vec<usize>> = f
            .nodes
            .iter()
            .map(|n| {
                let mut c = n.children.clone();
                c.sort_by_key(|&k| std::cmp::Reverse(f.nodes[k].bytes));
                c
            })
            .collect();
        for (n, c) in f.nodes.iter_mut().zip(order) {
            n.children = c;
        }
        f
    }
}

#[derive(Default)]
pub struct FlameView {
    /// The node drawn full width (0: all).
    pub root: usize,
    /// Frames drawn in the last frame (tests read it).
    pub drawn: usize,
}

const ROW: f32 = 18.0;

impl FlameView {
    pub fn ui(&mut self, ui: &mut egui::Ui, f: &Flame) {
        if f.nodes.is_empty() || f.nodes[0].bytes <= 0 {
            ui.weak("Nothing allocated at this position.");
            return;
        }
        if self.root >= f.nodes.len() {
            self.root = 0;
        }
        let depth = depth_of(f, self.root);
        let width = ui.available_width().max(100.0);
        let (rect, resp) = ui.allocate_exact_size(egui::vec2(width, (depth as f32 + 1.0) * ROW), egui::Sense::click());
        let painter = ui.painter_at(rect);
        let font = egui::FontId::proportional(11.0);
        let mut hovered: Option<usize> = None;
        let mut clicked: Option<usize> = None;
        let pointer = resp.hover_pos();
        self.drawn = 0;
        // the root row, then each node's children under it, side by side by bytes
        let mut stack = vec![(self.root, rect.left(), rect.width(), 0usize)];
        while let Some((n, x, w, d)) = stack.pop() {
            let node = &f.nodes[n];
            let r = egui::Rect::from_min_size(egui::pos2(x, rect.top() + d as f32 * ROW), egui::vec2(w, ROW - 1.0));
            let color = if n == 0 { ui.visuals().widgets.inactive.bg_fill } else { category_color(node.category()) };
            painter.rect_filled(r, 1.0, color);
            self.drawn += 1;
            if w > 30.0 {
                // one line, cut at the frame's right edge
                let text = format!("{}  {}", node.label, bytes(node.bytes.max(0) as u64));
                painter.with_clip_rect(r.shrink(1.0)).text(
                    r.left_center() + egui::vec2(3.0, 0.0),
                    egui::Align2::LEFT_CENTER,
                    text,
                    font.clone(),
                    egui::Color32::WHITE,
                );
            }
            if pointer.is_some_and(|p| r.contains(p)) {
                hovered = Some(n);
                if resp.clicked() {
                    clicked = Some(n);
                }
            }
            let mut cx = x;
            let total = node.bytes.max(1) as f32;
            for &c in &node.children {
                let cw = w * f.nodes[c].bytes.max(0) as f32 / total;
                if cw >= 1.0 {
                    stack.push((c, cx, cw, d + 1));
                }
                cx += cw;
            }
        }
        if let Some(n) = hovered {
            let node = &f.nodes[n];
            let share = 100.0 * node.bytes as f64 / f.nodes[0].bytes.max(1) as f64;
            resp.on_hover_text(format!(
                "{}\n{} in {} allocations ({share:.1}% of the position's bytes)\nmostly {}",
                node.label,
                bytes(node.bytes.max(0) as u64),
                node.count,
                super::breakdown_view::category_label(node.category())
            ));
        }
        if let Some(n) = clicked {
            // the top row zooms out to everything; any other frame zooms into it
            self.root = if n == self.root { 0 } else { n };
        }
    }
}

fn depth_of(f: &Flame, n: usize) -> usize {
    f.nodes[n].children.iter().map(|&c| 1 + depth_of(f, c)).max().unwrap_or(0)
}
