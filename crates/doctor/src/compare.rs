//! `doctor compare`: what differs between hosts' `doctor --json` reports — the tutorial rule
//! "configure every node the same", checked.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::{Finding, Host, Severity};

/// One setting that is not the same everywhere.
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    pub setting: String,
    /// The value most hosts have.
    pub common: String,
    /// Hosts with another value, and that value.
    pub odd: Vec<(String, String)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub schema: &'static str,
    pub hosts: Vec<String>,
    pub differences: Vec<Difference>,
    pub findings: Vec<Finding>,
}

/// (setting, value) pairs of one host.
fn settings(h: &Host) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let ecn = |v: Option<[bool; 8]>| match v {
        None => "not available".to_string(),
        Some(e) => (0..8)
            .filter(|i| e[*i])
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(","),
    };
    for d in &h.devices {
        m.insert(
            format!("{} firmware", d.name),
            d.fw_ver.clone().unwrap_or_default(),
        );
        for p in &d.ports {
            let id = format!("{} port {}", d.name, p.port);
            m.insert(format!("{id} state"), p.state.clone().unwrap_or_default());
            m.insert(format!("{id} rate"), p.rate.clone().unwrap_or_default());
            m.insert(
                format!("{id} link layer"),
                p.link_layer.clone().unwrap_or_default(),
            );
            if let Some(n) = h
                .netdevs
                .iter()
                .find(|n| Some(&n.name) == p.netdev.as_ref())
            {
                m.insert(
                    format!("{id} netdev MTU"),
                    n.mtu.map_or("-".into(), |x| x.to_string()),
                );
                m.insert(
                    format!("{id} RoCE MTU"),
                    n.roce_mtu.map_or("-".into(), |x| x.to_string()),
                );
                m.insert(format!("{id} ECN np priorities"), ecn(n.ecn_np));
                m.insert(format!("{id} ECN rp priorities"), ecn(n.ecn_rp));
                m.insert(
                    format!("{id} PFC priorities"),
                    ecn(n.pfc.as_ref().map(|p| p.enabled)),
                );
                m.insert(
                    format!("{id} trust"),
                    n.trust.clone().unwrap_or_else(|| "not available".into()),
                );
            }
            // The index of the RoCE v2 GID of each IPv4 subnet (/24): applications configure it.
            for g in p
                .gids
                .iter()
                .filter(|g| g.kind.as_deref() == Some("RoCE v2"))
            {
                if let Some(ip) = &g.ipv4 {
                    let net = ip.rsplit_once('.').map_or(ip.as_str(), |x| x.0);
                    m.insert(
                        format!("{id} RoCE v2 GID index for {net}.0/24"),
                        g.index.to_string(),
                    );
                }
            }
        }
    }
    let mut mods = h.modules.clone();
    mods.sort();
    m.insert("RDMA kernel modules".into(), mods.join(" "));
    m
}

/// Compares hosts; `names` label them (their hostnames by default).
pub fn compare(hosts: &[(String, Host)]) -> Comparison {
    let per: Vec<BTreeMap<String, String>> = hosts.iter().map(|(_, h)| settings(h)).collect();
    let mut keys: Vec<&String> = per.iter().flat_map(|m| m.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut differences = Vec::new();
    for k in keys {
        let vals: Vec<String> = per
            .iter()
            .map(|m| m.get(k).cloned().unwrap_or_else(|| "(absent)".into()))
            .collect();
        let mut count: BTreeMap<&String, usize> = BTreeMap::new();
        for v in &vals {
            *count.entry(v).or_default() += 1;
        }
        if count.len() < 2 {
            continue;
        }
        let common = count
            .iter()
            .max_by_key(|(v, n)| (**n, std::cmp::Reverse(*v)))
            .map(|(v, _)| (*v).clone())
            .unwrap_or_default();
        let odd = hosts
            .iter()
            .zip(&vals)
            .filter(|(_, v)| **v != common)
            .map(|((n, _), v)| (n.clone(), v.clone()))
            .collect();
        differences.push(Difference {
            setting: k.clone(),
            common,
            odd,
        });
    }
    let findings = differences
        .iter()
        .map(|d| Finding {
            severity: if d.setting.contains("MTU") || d.setting.contains("ECN") || d.setting.contains("GID index") { Severity::Warning } else { Severity::Info },
            code: "compare.differs".into(),
            summary: format!("{} differs: {}", d.setting, d.odd.iter().map(|(h, v)| format!("{h} has {v}")).collect::<Vec<_>>().join(", ")),
            evidence: vec![format!("the other hosts have {}", d.common)],
            advice: "Configure every node of the cluster the same: MTU, RoCE MTU, ECN/PFC priorities, firmware and GID indexes that differ make some pairs of hosts slower or unable to connect.".into(),
        })
        .collect();
    Comparison {
        schema: "rdmascope.doctor.compare.v1",
        hosts: hosts.iter().map(|h| h.0.clone()).collect(),
        differences,
        findings,
    }
}
