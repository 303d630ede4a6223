//! The GUI panes (timeline, kernel table, memory, roofline, ranks). Arrives with the timeline issue.
