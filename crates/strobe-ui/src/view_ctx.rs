//! What every pane's `ui` gets: the workspace, the selection and the shared view state to
//! read, the highlight in force, and a way to ask for changes. Panes never change shared
//! state or each other: they emit `Command`s (or send them from a worker thread through
//! `sender`), and the app applies them once per frame.

use crate::commands::{Command, CommandSender, Highlight, Selection};
use crate::timeline::TimelineState;
use crate::workspace::Workspace;

pub struct ViewCtx<'a> {
    pub ws: &'a Workspace,
    pub sel: &'a Selection,
    /// A selected kernel's occurrences, else the search matches.
    pub highlight: &'a Highlight,
    /// The time window, marks, folds and pins.
    pub state: &'a TimelineState,
    sender: &'a CommandSender,
    commands: &'a mut Vec<Command>,
}

/// What a `ViewCtx` is made of besides the commands it collects.
pub struct Shared<'a> {
    pub ws: &'a Workspace,
    pub sel: &'a Selection,
    pub highlight: &'a Highlight,
    pub state: &'a TimelineState,
    pub sender: &'a CommandSender,
}

impl<'a> ViewCtx<'a> {
    pub fn new(s: Shared<'a>, commands: &'a mut Vec<Command>) -> Self {
        ViewCtx { ws: s.ws, sel: s.sel, highlight: s.highlight, state: s.state, sender: s.sender, commands }
    }

    pub fn emit(&mut self, c: Command) {
        self.commands.push(c);
    }

    /// A sender to hand to a worker thread: what it sends is applied on a later frame.
    pub fn sender(&self) -> CommandSender {
        self.sender.clone()
    }

    /// The commands emitted so far this frame (tests).
    pub fn emitted(&self) -> &[Command] {
        self.commands
    }
}
