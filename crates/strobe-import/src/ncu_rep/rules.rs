//! A launch's `RuleResult`s → `NcuRule`s, one per rule message, as ncu's `--page details
//! --print-details all` CSV export lists them: the rule's identifier, the message type
//! (`OPT`, `WRN`, `ERR`, `INF`), the message with its cross-reference markup rendered, and
//! the speedup estimate of the item the message belongs to. A rule without a body (it found
//! nothing to say) gives nothing, as in the export.

use super::messages::{text, RuleResult};
use strobe_model::ncu::NcuRule;

/// `RuleResultMessageType` as the CSV export prints it.
fn kind_text(kind: Option<u64>) -> String {
    match kind {
        Some(1) => "INF".into(),
        Some(2) => "WRN".into(),
        Some(3) => "ERR".into(),
        Some(4) => "OPT".into(),
        Some(0) | None => String::new(),
        Some(n) => n.to_string(),
    }
}

/// The estimate's type as the CSV export prints it.
fn speedup_type_text(kind: Option<u64>) -> Option<String> {
    match kind? {
        1 => Some("local".into()),
        2 => Some("global".into()),
        n => Some(n.to_string()),
    }
}

pub fn rules(results: Vec<RuleResult>) -> Vec<NcuRule> {
    let mut out = Vec::new();
    for r in results {
        let name = r.identifier.map(text).unwrap_or_default();
        let section = r.section_identifier.map(text).unwrap_or_default();
        for item in r.body.map(|b| b.items).unwrap_or_default() {
            let Some(m) = item.message else { continue };
            let speedup = item.speedup.as_ref();
            out.push(NcuRule {
                name: name.clone(),
                section: section.clone(),
                kind: kind_text(m.kind),
                message: render_markup(&m.text.map(text).unwrap_or_default()),
                speedup_type: speedup.and_then(|s| speedup_type_text(s.kind)),
                speedup_pct: speedup.and_then(|s| s.value).filter(|v| v.is_finite()),
            });
        }
    }
    out
}

/// ncu's rule-message markup as its CSV export renders it: `@section:ID:Title@` → `Title`,
/// `@url:Text:https://…@` → `Text (https://…)`. Anything else between `@`s (an e-mail
/// address, a lone `@`) is kept as written.
pub fn render_markup(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('@') {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 1..];
        let rendered = tail.find('@').and_then(|end| {
            let body = &tail[..end];
            let text = if let Some(b) = body.strip_prefix("section:") {
                b.split_once(':').map_or(b, |(_, title)| title).to_string()
            } else if let Some(b) = body.strip_prefix("url:") {
                let (label, url) = b.split_once(':')?;
                format!("{label} ({url})")
            } else {
                return None;
            };
            Some((text, end))
        });
        match rendered {
            Some((text, end)) => {
                out.push_str(&text);
                rest = &tail[end + 1..];
            }
            None => {
                out.push('@');
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup() {
        assert_eq!(
            render_markup("Look at @section:LaunchStats:Launch Statistics@ for more."),
            "Look at Launch Statistics for more."
        );
        assert_eq!(
            render_markup("See the @url:Profiling Guide:https://docs.nvidia.com/x#roofline@ for details."),
            "See the Profiling Guide (https://docs.nvidia.com/x#roofline) for details."
        );
        assert_eq!(render_markup("mail a@b.c or @ alone"), "mail a@b.c or @ alone");
        assert_eq!(render_markup("@section:X:Y"), "@section:X:Y");
    }
}
