//! File ▸ Recent: one entry per thing the user opened — a file, a rank set opened together, a
//! folder, a session file — so a rank set reopens as a set. The session the viewer keeps for
//! itself between runs is never listed: the user did not open it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::path::{Path, PathBuf};

/// How many entries File ▸ Recent keeps.
const KEPT: usize = 12;

/// What was opened together (never empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recent(pub Vec<PathBuf>);

impl Recent {
    /// The menu's line: the path, or "N ranks — first…" for a set.
    pub fn label(&self) -> String {
        match self.0.as_slice() {
            [one] => one.display().to_string(),
            [first, ..] => {
                let name = first.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
                format!("{} ranks — {name}…", self.0.len())
            }
            [] => String::new(),
        }
    }

    /// The viewer's own last session (kept in the config dir), not something the user opened.
    fn is_internal(&self) -> bool {
        let last = crate::session::Session::last_path();
        self.0.iter().any(|p| Some(p.as_path()) == last.as_deref())
    }
}

/// What File ▸ Recent lists, newest first.
pub fn shown(recent: &[Recent]) -> impl Iterator<Item = &Recent> {
    recent.iter().filter(|r| !r.0.is_empty() && !r.is_internal())
}

/// Puts `paths` (opened together) at the top of the list.
pub fn remember(recent: &mut Vec<Recent>, paths: &[&Path]) {
    let entry = Recent(paths.iter().map(|p| p.to_path_buf()).collect());
    if entry.0.is_empty() || entry.is_internal() {
        return;
    }
    recent.retain(|r| *r != entry);
    recent.insert(0, entry);
    recent.truncate(KEPT);
}

// One path is stored as a plain string, as the list was before sets: older settings still read.
impl Serialize for Recent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => one.serialize(s),
            all => all.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Recent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Stored {
            One(PathBuf),
            Set(Vec<PathBuf>),
        }
        Ok(match Stored::deserialize(d)? {
            Stored::One(p) => Recent(vec![p]),
            Stored::Set(v) => Recent(v),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_is_one_entry_and_old_lists_still_read() {
        let mut r = Vec::new();
        remember(&mut r, &[Path::new("/a/r0.json"), Path::new("/a/r1.json")]);
        remember(&mut r, &[Path::new("/a/one.json")]);
        remember(&mut r, &[Path::new("/a/r0.json"), Path::new("/a/r1.json")]);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].label(), "2 ranks — r0.json…");
        assert_eq!(r[1].label(), "/a/one.json");
        if let Some(last) = crate::session::Session::last_path() {
            remember(&mut r, &[&last]);
            assert_eq!(r.len(), 2, "the viewer's own session is not remembered");
            r.push(Recent(vec![last]));
            assert_eq!(shown(&r).count(), 2, "nor listed, where older settings hold it");
        }
        let json = serde_json::to_string(&r[..2]).unwrap();
        assert_eq!(json, r#"[["/a/r0.json","/a/r1.json"],"/a/one.json"]"#);
        let back: Vec<Recent> = serde_json::from_str(r#"["/x/old.json", ["/y/a", "/y/b"]]"#).unwrap();
        assert_eq!(back, vec![Recent(vec!["/x/old.json".into()]), Recent(vec!["/y/a".into(), "/y/b".into()])]);
    }
}
