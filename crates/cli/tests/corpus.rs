//! Every frame of every corpus capture decodes without error, and per file the ICRC
//! ok / bad / truncated counts equal the ones SOURCES.md records.

mod common;

use std::collections::HashMap;

use rdmascope_wire::{DecodeOptions, IcrcStatus};

#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    ok: u64,
    bad: u64,
    truncated: u64,
}

/// Parses the index table of SOURCES.md: file → expected ICRC counts (`None` for n/a).
fn expected(sources: &str) -> HashMap<String, Option<Counts>> {
    let mut m = HashMap::new();
    for line in sources.lines() {
        let cols: Vec<&str> = line.split('|').map(str::trim).collect();
        if cols.len() < 10 || !cols[1].starts_with('`') {
            continue;
        }
        let name = cols[1].trim_matches('`').to_string();
        let icrc = cols[8];
        if icrc == "n/a" {
            m.insert(name, None);
            continue;
        }
        let num_before = |word: &str| -> u64 {
            let i = icrc
                .find(word)
                .unwrap_or_else(|| panic!("no '{word}' in {icrc}"));
            let digits: String = icrc[..i]
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            digits.chars().rev().collect::<String>().parse().unwrap()
        };
        let truncated = if icrc.contains("sliced") {
            num_before(" sliced")
        } else {
            0
        };
        m.insert(
            name,
            Some(Counts {
                ok: num_before(" ok"),
                bad: num_before(" bad"),
                truncated,
            }),
        );
    }
    m
}

#[test]
fn corpus_decodes_and_icrc_counts_match_sources() {
    let Some(dir) = common::corpus() else { return };
    let sources = std::fs::read_to_string(dir.join("SOURCES.md")).expect("SOURCES.md");
    let exp = expected(&sources);
    let files = common::corpus_files(&dir);
    assert!(!files.is_empty());
    let opts = DecodeOptions::default();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let mut got = Counts::default();
        let mut vcrc_bad = 0;
        for rec in common::read_all(&path) {
            let f = rec.decode(&opts);
            assert!(
                f.error.is_none(),
                "{name} frame {}: {}",
                rec.number,
                f.error.unwrap()
            );
            match f.icrc {
                Some(IcrcStatus::Ok) => got.ok += 1,
                Some(IcrcStatus::Bad) => got.bad += 1,
                Some(IcrcStatus::Truncated) => got.truncated += 1,
                Some(IcrcStatus::Unverifiable) => {
                    panic!("{name} frame {}: ICRC unverifiable", rec.number)
                }
                None => {}
            }
            if f.vcrc == Some(IcrcStatus::Bad) {
                vcrc_bad += 1;
            }
        }
        let want = exp
            .get(&name)
            .unwrap_or_else(|| panic!("{name} is not in SOURCES.md"));
        match want {
            Some(w) => assert_eq!(&got, w, "{name}: ICRC counts"),
            None => assert_eq!(got, Counts::default(), "{name}: SOURCES.md says n/a"),
        }
        assert_eq!(vcrc_bad, 0, "{name}: VCRC");
        eprintln!("{name}: icrc {got:?} as SOURCES.md says");
    }
}

#[test]
fn sources_table_parses() {
    let t = "| `a.pcap` | 1 | 2 | r | p | c | l | v2 105 ok/0 bad | x |\n| `b.pcap` | 1 | 2 | r | p | c | l | n/a | x |";
    let e = expected(t);
    assert_eq!(
        e["a.pcap"],
        Some(Counts {
            ok: 105,
            bad: 0,
            truncated: 0
        })
    );
    assert_eq!(e["b.pcap"], None);
}
