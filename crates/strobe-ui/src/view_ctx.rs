//! What every pane's `ui` gets: the workspace and the selection to read, the highlight in
//! force, and a way to ask for changes. Panes never change shared state or each other: they
//! emit `Command`s, and the app applies them once per frame.

use crate::commands::{Command, Highlight, Selection};
use crate::workspace::Workspace;

pub struct ViewCtx<'a> {
    pub ws: &'a Workspace,
    pub sel: &'a Selection,
    /// A selected kernel's occurrences, else the search matches.
    pub highlight: &'a Highlight,
    commands: &'a mut Vec<Command>,
}

impl<'a> ViewCtx<'a> {
    pub fn new(
        ws: &'a Workspace,
        sel: &'a Selection,
        highlight: &'a Highlight,
        commands: &'a mut Vec<Command>,
    ) -> Self {
        ViewCtx { ws, sel, highlight, commands }
    }

    pub fn emit(&mut self, c: Command) {
        self.commands.push(c);
    }

    /// The commands emitted so far this frame (tests).
    pub fn emitted(&self) -> &[Command] {
        self.commands
    }
}
