//! Every finding code the rules can emit has its row in docs/findings.md and its place in the
//! README's list of findings.

const FINDINGS_RS: &str = include_str!("../src/findings.rs");
const DOCS: &str = include_str!("../../../docs/findings.md");
const README: &str = include_str!("../../../README.md");

/// The codes `findings.rs` emits: each stands alone on its line as the `code` argument.
fn codes() -> Vec<&'static str> {
    let mut v: Vec<&str> = FINDINGS_RS
        .lines()
        .filter_map(|l| l.trim().strip_prefix('"')?.strip_suffix("\","))
        .filter(|s| {
            let mut parts = s.split('.');
            let ok = |p: Option<&str>| {
                p.is_some_and(|p| {
                    !p.is_empty()
                        && p.bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                })
            };
            ok(parts.next()) && ok(parts.next()) && parts.next().is_none()
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn every_finding_code_is_documented() {
    let codes = codes();
    // A guard for the reading above: the rules emit more than two dozen codes.
    assert!(codes.len() >= 29, "{codes:?}");
    for c in codes {
        assert!(
            DOCS.contains(&format!("| `{c}` |")),
            "{c} has no row in docs/findings.md"
        );
        assert!(
            README.contains(&format!("`{c}`")),
            "{c} is not in the README's list of findings"
        );
    }
}
