//! Reading NCCL logs written with `NCCL_DEBUG=INFO`: per rank, the network NCCL chose, the
//! NCCL_* variables it echoed, and the errors, with findings and advice.
//!
//! Lines look like `host:pid:tid [dev] NCCL INFO message` (or `NCCL WARN`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::{Finding, Severity};

/// What one process (rank) of the job said.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Rank {
    pub host: String,
    pub pid: u32,
    pub rank: Option<u32>,
    pub nranks: Option<u32>,
    /// "IB" or "Socket" (from "Using network …").
    pub network: Option<String>,
    /// HCAs with ports and link layer from "NET/IB : Using [0]mlx5_0:1/RoCE …".
    pub hcas: Vec<String>,
    /// Interfaces from "NET/Socket : Using [0]eth0:10.0.0.1<0>".
    pub socket_ifs: Vec<String>,
    pub gid_index: Option<String>,
    pub env: BTreeMap<String, String>,
    pub errors: Vec<String>,
}

/// The parsed logs.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NcclReport {
    pub schema: &'static str,
    pub files: Vec<String>,
    pub ranks: Vec<Rank>,
    pub findings: Vec<Finding>,
}

/// Splits `host:pid:tid [dev] NCCL LEVEL message` into (host, pid, level, message).
fn split(line: &str) -> Option<(&str, u32, &str, &str)> {
    let i = line.find(" NCCL ")?;
    let (head, rest) = line.split_at(i);
    let rest = &rest[6..];
    let (level, msg) = rest.split_once(' ').unwrap_or((rest, ""));
    let id = head.split_whitespace().next()?;
    let mut parts = id.split(':');
    let host = parts.next()?;
    let pid = parts.next()?.parse().ok()?;
    Some((host, pid, level, msg.trim()))
}

/// The token lists after "Using" in a NET line, e.g. "[0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB …".
fn using_list(msg: &str) -> Vec<String> {
    let Some(i) = msg.find("Using ") else {
        return Vec::new();
    };
    msg[i + 6..]
        .split(';')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .map(|t| t.split_once(']').map_or(t, |x| x.1).to_string())
        .collect()
}

/// Parses log texts (name, contents).
pub fn parse(files: &[(String, String)]) -> NcclReport {
    let mut ranks: BTreeMap<(String, u32), Rank> = BTreeMap::new();
    for (_, text) in files {
        for line in text.lines() {
            let Some((host, pid, level, msg)) = split(line) else {
                // Errors reported outside NCCL's own prefix (test harnesses, PyTorch).
                if line.contains("ncclSystemError")
                    || line.contains("ncclInternalError")
                    || line.contains("ncclRemoteError")
                    || line.contains("Watchdog caught collective operation timeout")
                {
                    if let Some(r) = ranks.values_mut().last() {
                        r.errors.push(line.trim().to_string());
                    }
                }
                continue;
            };
            let r = ranks
                .entry((host.to_string(), pid))
                .or_insert_with(|| Rank {
                    host: host.into(),
                    pid,
                    ..Default::default()
                });
            if let Some(rest) = msg.strip_prefix("Using network ") {
                r.network = Some(rest.trim().to_string());
            } else if msg.starts_with("NET/IB : Using") {
                r.hcas = using_list(msg);
            } else if msg.starts_with("NET/Socket : Using") {
                r.socket_ifs = using_list(msg);
            } else if msg.starts_with("NCCL_") {
                // "NCCL_IB_HCA set to mlx5_0" / "NCCL_IB_GID_INDEX set by environment to 3."
                let (name, rest) = msg.split_once(' ').unwrap_or((msg, ""));
                let value = rest
                    .rsplit_once(" to ")
                    .map_or(rest, |x| x.1)
                    .trim_end_matches('.')
                    .trim();
                r.env.insert(name.to_string(), value.to_string());
                if name == "NCCL_IB_GID_INDEX" {
                    r.gid_index = Some(value.to_string());
                }
            } else if let Some(i) = msg.find(" rank ") {
                let mut it = msg[i + 6..].split_whitespace();
                r.rank = it.next().and_then(|v| v.parse().ok());
                if it.next() == Some("nranks") {
                    r.nranks = it.next().and_then(|v| v.parse().ok());
                }
            }
            if level == "WARN"
                || msg.contains("ncclSystemError")
                || msg.contains("ncclInternalError")
                || msg.contains("ncclRemoteError")
            {
                r.errors.push(msg.to_string());
            }
        }
    }
    let mut rep = NcclReport {
        schema: "rdmascope.doctor.nccl.v1",
        files: files.iter().map(|f| f.0.clone()).collect(),
        ranks: ranks.into_values().collect(),
        findings: Vec::new(),
    };
    rep.findings = findings(&rep.ranks);
    rep
}

fn who(r: &Rank) -> String {
    match r.rank {
        Some(n) => format!("rank {n} ({}:{})", r.host, r.pid),
        None => format!("{}:{}", r.host, r.pid),
    }
}

fn findings(ranks: &[Rank]) -> Vec<Finding> {
    let mut f = Vec::new();
    let fallback: Vec<&Rank> = ranks
        .iter()
        .filter(|r| r.network.as_deref() == Some("Socket"))
        .collect();
    if !fallback.is_empty() {
        f.push(Finding {
            severity: Severity::Critical,
            code: "nccl.socket_fallback".into(),
            summary: format!("{} ranks use TCP sockets instead of RDMA", fallback.len()),
            evidence: fallback.iter().map(|r| format!("{}: NET/Socket over {}", who(r), r.socket_ifs.join(" "))).collect(),
            advice: "NCCL found no usable RDMA device and fell back to TCP, which is many times slower. Check that the RDMA modules are loaded and `rdmascope doctor` sees ACTIVE ports on this host, that NCCL_IB_HCA names existing devices (or is unset), that NCCL_IB_DISABLE is not set, and that containers get /dev/infiniband; NCCL_SOCKET_IFNAME only chooses the TCP interface.".into(),
        });
    }
    let classify = |e: &str| -> Option<(&'static str, Severity, &'static str)> {
        if e.contains("error 12") {
            Some(("nccl.retry_exceeded", Severity::Critical, "Work completion error 12 is IBV_WC_RETRY_EXC_ERR: the transport retry counter ran out, because packets or ACKs were lost (or the peer died). Fix the loss first (PFC on the RDMA priority end to end, link errors: `rdmascope analyze` a capture, `rdmascope doctor --interval 5s` on both hosts); NCCL_IB_TIMEOUT (default 18 ≈ 1 s) and NCCL_IB_RETRY_CNT only buy time."))
        } else if e.contains("error 13") {
            Some(("nccl.rnr_retry_exceeded", Severity::Critical, "Work completion error 13 is IBV_WC_RNR_RETRY_EXC_ERR: the receiver had no receive buffer posted for too long; usually the peer process stalled or died."))
        } else if e.to_ascii_lowercase().contains("timeout") {
            Some(("nccl.timeout", Severity::Critical, "A collective did not finish in time: a rank is stuck, or the network loses packets. Look at the first rank that reported an error, and check the fabric for loss and PFC storms."))
        } else if e.contains("ncclSystemError")
            || e.contains("ncclRemoteError")
            || e.contains("ncclInternalError")
            || e.contains("WARN")
        {
            Some(("nccl.error", Severity::Warning, "NCCL reported an error: ncclSystemError points at the OS or network (a device, a socket, a peer that went away), ncclRemoteError at another rank, ncclInternalError at NCCL itself. Start from the first error in time and set NCCL_DEBUG_SUBSYS=INIT,NET for more detail."))
        } else {
            None
        }
    };
    let mut by_code: BTreeMap<&str, (Severity, &str, Vec<String>)> = BTreeMap::new();
    for r in ranks {
        for e in &r.errors {
            if let Some((code, sev, advice)) = classify(e) {
                by_code
                    .entry(code)
                    .or_insert((sev, advice, Vec::new()))
                    .2
                    .push(format!("{}: {e}", who(r)));
            }
        }
    }
    for (code, (sev, advice, ev)) in by_code {
        f.push(Finding {
            severity: sev,
            code: code.into(),
            summary: format!(
                "{} {} ({code})",
                ev.len(),
                if ev.len() == 1 {
                    "error line"
                } else {
                    "error lines"
                }
            ),
            evidence: ev.into_iter().take(10).collect(),
            advice: advice.into(),
        });
    }
    let ib: Vec<&Rank> = ranks
        .iter()
        .filter(|r| r.network.as_deref() == Some("IB"))
        .collect();
    let roce_no_gid: Vec<&&Rank> = ib
        .iter()
        .filter(|r| r.hcas.iter().any(|h| h.ends_with("/RoCE")) && r.gid_index.is_none())
        .collect();
    if !roce_no_gid.is_empty() {
        f.push(Finding {
            severity: Severity::Info,
            code: "nccl.gid_index".into(),
            summary: format!("{} ranks use RoCE without NCCL_IB_GID_INDEX: NCCL picks the GID itself", roce_no_gid.len()),
            evidence: roce_no_gid.iter().take(10).map(|r| format!("{}: {}", who(r), r.hcas.join(" "))).collect(),
            advice: "Recent NCCL picks a RoCE v2 GID; with several addresses or older NCCL, set NCCL_IB_GID_INDEX to the RoCE v2 index that `rdmascope doctor` lists for the interface's IPv4 address.".into(),
        });
    }
    f.sort_by(|a, b| a.severity.cmp(&b.severity).then(a.code.cmp(&b.code)));
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn lines() {
        assert_eq!(
            split("n1:42:43 [0] NCCL INFO Using network IB"),
            Some(("n1", 42, "INFO", "Using network IB"))
        );
        assert_eq!(
            using_list("NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB eth0:10.0.0.1<0>"),
            ["mlx5_0:1/RoCE", "mlx5_1:1/RoCE"]
        );
    }
}
