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
    /// HCAs with ports and link layer from `NET/IB : Using [0]mlx5_0:1/RoCE …`.
    pub hcas: Vec<String>,
    /// Interfaces from `NET/Socket : Using [0]eth0:10.0.0.1<0>`.
    pub socket_ifs: Vec<String>,
    pub gid_index: Option<String>,
    pub env: BTreeMap<String, String>,
    /// The first [`ERRORS_KEPT`] error lines.
    pub errors: Vec<String>,
    /// Every error line.
    pub error_lines: u64,
}

/// Error lines kept per rank; all are counted.
pub const ERRORS_KEPT: usize = 20;
/// Error lines a finding cites.
const EVIDENCE: usize = 10;

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

/// The token lists after "Using" in a NET line, e.g. `[0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB …`.
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
    let mut p = Parser::default();
    for (_, text) in files {
        text.lines().for_each(|l| p.line(l));
    }
    p.finish(files.iter().map(|f| f.0.clone()).collect())
}

/// Reads log lines one at a time, keeping a bounded amount of each rank's: the logs of a large
/// job run to gigabytes.
#[derive(Debug, Default)]
pub struct Parser {
    ranks: BTreeMap<(String, u32), Rank>,
    /// The process of the last NCCL line.
    last: Option<(String, u32)>,
    /// Per finding code: its error lines, and the first [`EVIDENCE`] with their process.
    by_code: BTreeMap<&'static str, Class>,
}

#[derive(Debug)]
struct Class {
    severity: Severity,
    advice: &'static str,
    lines: u64,
    evidence: Vec<((String, u32), String)>,
}

impl Parser {
    /// One line of a log (without its line break).
    pub fn line(&mut self, line: &str) {
        let Some((host, pid, level, msg)) = split(line) else {
            // Errors reported outside NCCL's own prefix (test harnesses, PyTorch): the process
            // of the rank the line names ("[Rank 3]", "[rank3]"), else of the last NCCL line.
            if line.contains("ncclSystemError")
                || line.contains("ncclInternalError")
                || line.contains("ncclRemoteError")
                || line.contains("Watchdog caught collective operation timeout")
            {
                let named = named_rank(line).and_then(|n| {
                    self.ranks
                        .iter()
                        .find(|(_, r)| r.rank == Some(n))
                        .map(|(k, _)| k.clone())
                });
                if let Some(k) = named.or_else(|| self.last.clone()) {
                    self.error(k, line.trim());
                }
            }
            return;
        };
        let key = (host.to_string(), pid);
        let r = self.ranks.entry(key.clone()).or_insert_with(|| Rank {
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
            self.error(key.clone(), msg);
        }
        self.last = Some(key);
    }

    /// An error line of process `k`: kept if it is among its first, counted by its kind.
    fn error(&mut self, k: (String, u32), e: &str) {
        let Some(r) = self.ranks.get_mut(&k) else {
            return;
        };
        r.error_lines += 1;
        if r.errors.len() < ERRORS_KEPT {
            r.errors.push(e.to_string());
        }
        if let Some((code, severity, advice)) = classify(e) {
            let c = self.by_code.entry(code).or_insert(Class {
                severity,
                advice,
                lines: 0,
                evidence: Vec::new(),
            });
            c.lines += 1;
            if c.evidence.len() < EVIDENCE {
                c.evidence.push((k, e.to_string()));
            }
        }
    }

    /// The report of the lines read from `files`.
    pub fn finish(self, files: Vec<String>) -> NcclReport {
        let mut f = Vec::new();
        for (code, c) in &self.by_code {
            f.push(Finding {
                severity: c.severity,
                code: (*code).into(),
                summary: format!(
                    "{} {} ({code})",
                    c.lines,
                    if c.lines == 1 {
                        "error line"
                    } else {
                        "error lines"
                    }
                ),
                evidence: c
                    .evidence
                    .iter()
                    .map(|(k, e)| format!("{}: {e}", who(&self.ranks[k])))
                    .collect(),
                advice: c.advice.into(),
            });
        }
        let ranks: Vec<Rank> = self.ranks.into_values().collect();
        f.extend(findings(&ranks));
        f.sort_by(|a, b| a.severity.cmp(&b.severity).then(a.code.cmp(&b.code)));
        NcclReport {
            schema: "rdmascope.doctor.nccl.v1",
            files,
            ranks,
            findings: f,
        }
    }
}

/// The rank a line names as `[Rank 3]` or `[rank3]` (PyTorch's prefixes).
fn named_rank(line: &str) -> Option<u32> {
    let i = line
        .find("[Rank ")
        .map(|i| i + 6)
        .or_else(|| line.find("[rank").map(|i| i + 5))?;
    let rest = &line[i..];
    let end = rest.find(']')?;
    rest[..end].trim().parse().ok()
}

/// The finding code, severity and advice of an error line, if it has one.
fn classify(e: &str) -> Option<(&'static str, Severity, &'static str)> {
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
}

fn who(r: &Rank) -> String {
    match r.rank {
        Some(n) => format!("rank {n} ({}:{})", r.host, r.pid),
        None => format!("{}:{}", r.host, r.pid),
    }
}

/// Settings that name something of one process, so differ between ranks by design.
fn per_process(name: &str) -> bool {
    name.ends_with("_FILE") || matches!(name, "NCCL_COMM_ID" | "NCCL_HOSTID")
}

/// The NCCL_* settings that ranks echoed with different values: (name, evidence), the value
/// of most ranks first, each with up to three of its ranks. A rank that did not echo a setting
/// is not counted (its log may lack the lines).
fn env_mismatches(ranks: &[Rank]) -> Vec<(&str, String)> {
    let mut by_name: BTreeMap<&str, BTreeMap<&str, Vec<&Rank>>> = BTreeMap::new();
    for r in ranks {
        for (k, v) in &r.env {
            if !per_process(k) {
                by_name.entry(k).or_default().entry(v).or_default().push(r);
            }
        }
    }
    let mut out = Vec::new();
    for (name, values) in by_name {
        if values.len() < 2 {
            continue;
        }
        let mut v: Vec<(&str, Vec<&Rank>)> = values.into_iter().collect();
        v.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
        let parts: Vec<String> = v
            .iter()
            .map(|(value, rs)| {
                let mut who_: Vec<String> = rs.iter().take(3).map(|r| who(r)).collect();
                if rs.len() > 3 {
                    who_.push(format!("{} more", rs.len() - 3));
                }
                let n = if rs.len() == 1 { "rank" } else { "ranks" };
                format!("{value:?} on {} {n} ({})", rs.len(), who_.join(", "))
            })
            .collect();
        out.push((name, format!("{name}: {}", parts.join("; "))));
    }
    out
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
    let mismatched = env_mismatches(ranks);
    if !mismatched.is_empty() {
        let names: Vec<&str> = mismatched.iter().map(|m| m.0).collect();
        f.push(Finding {
            severity: Severity::Warning,
            code: "nccl.env_mismatch".into(),
            summary: if names.len() == 1 {
                format!("{} differs between ranks", names[0])
            } else {
                format!("{} NCCL_* settings differ between ranks: {}", names.len(), names.join(", "))
            },
            evidence: mismatched.into_iter().map(|m| m.1).collect(),
            advice: "The ranks of one job must agree on how they use the fabric. NCCL_IB_GID_INDEX must select the same kind of GID on every host (RoCE v2, the job's IPv4 subnet): a different index is right only where that host's GID table differs (`rdmascope doctor compare` lists the RoCE v2 GID index of each subnet per host), otherwise it selects RoCE v1 against v2 or IPv6 against IPv4. A different NCCL_IB_TC or NCCL_IB_SL puts the traffic on another priority (perhaps one without PFC), and different NCCL_IB_HCA, NCCL_IB_DISABLE or NCCL_NET settings can leave ranks on different transports. Set NCCL_* once for the whole job, in the launcher's environment, and look for a node or container that sets its own (/etc/nccl.conf, ~/.nccl.conf, a module or profile script).".into(),
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
        assert_eq!(
            named_rank("[rank3]:[E1204 12:00:00.0] [Rank 3] Watchdog caught"),
            Some(3)
        );
        assert_eq!(
            named_rank("[rank12]:[E ProcessGroupNCCL.cpp:616] x"),
            Some(12)
        );
        assert_eq!(named_rank("test.cu:412 ncclSystemError"), None);
    }

    /// Every error line is counted, a bounded number kept; a line outside NCCL's prefix is the
    /// named rank's, else the process's of the last NCCL line.
    #[test]
    fn errors_counted_all_kept_few_and_attributed() {
        let mut p = Parser::default();
        for (host, rank) in [("a", 0), ("b", 1)] {
            p.line(&format!(
                "{host}:7:7 [0] NCCL INFO comm 0x1 rank {rank} nranks 2 - Init COMPLETE"
            ));
        }
        for i in 0..1000 {
            p.line(&format!("a:7:9 [0] net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer with error 12, try {i}"));
        }
        // After b's last line: named, it is a's; unnamed, b's.
        p.line("b:7:7 [0] NCCL INFO enqueue.cc:1176 -> 6");
        p.line("[rank0]:[E1204] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL");
        p.line("test.cu:412 'unhandled system error' ncclSystemError");
        let r = p.finish(vec!["x.log".into()]);
        let (a, b) = (&r.ranks[0], &r.ranks[1]);
        assert_eq!((a.error_lines, a.errors.len()), (1001, ERRORS_KEPT));
        assert_eq!(b.error_lines, 1);
        assert!(a.errors[0].ends_with("try 0") && b.errors[0].starts_with("test.cu"));
        let f = |code: &str| r.findings.iter().find(|f| f.code == code).unwrap();
        let retry = f("nccl.retry_exceeded");
        assert_eq!(retry.summary, "1000 error lines (nccl.retry_exceeded)");
        assert_eq!(retry.evidence.len(), EVIDENCE);
        assert!(
            retry.evidence[0].starts_with("rank 0 (a:7): ") && retry.evidence[0].ends_with("try 0")
        );
        assert!(f("nccl.timeout").evidence[0].starts_with("rank 0 (a:7): [rank0]"));
        assert!(f("nccl.error").evidence[0].starts_with("rank 1 (b:7): test.cu"));
    }
}
