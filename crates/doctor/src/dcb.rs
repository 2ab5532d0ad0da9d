//! Data Center Bridging state of a netdev (IEEE 802.1Qaz/Qbb): PFC per priority, the APP table
//! (DSCP → priority, from which the trust mode follows), and the netdev's pause counters.
//!
//! Two sources, one model: on the live host the kernel's DCB netlink interface (`RTM_GETDCB`,
//! `DCB_CMD_IEEE_GET`, include/uapi/linux/dcbnl.h) and the ethtool statistics; under a fixture or
//! collected root, the saved output of `dcb pfc show dev IF`, `dcb app show dev IF` and
//! `ethtool -S IF` (iproute2 dcb-pfc(8), dcb-app(8), ethtool(8)). Parsing is safe byte and text
//! work; only the socket calls live in `kernel`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `IEEE_8021QAZ_APP_SEL_DSCP`.
pub const SEL_DSCP: u8 = 5;
/// The DSCP RoCE traffic carries by default on ConnectX and in NCCL/UCX (AF31 = 26).
pub const ROCE_DSCP: u8 = 26;

/// PFC configuration (`struct ieee_pfc`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Pfc {
    /// Traffic classes that can be PFC-enabled.
    pub cap: u8,
    /// PFC enabled, per priority 0..7.
    pub enabled: [bool; 8],
    /// Pause frames sent, per priority (`requests`), when the driver reports them.
    pub requests: [u64; 8],
    /// Pause frames received, per priority (`indications`).
    pub indications: [u64; 8],
}

/// One APP table entry (`struct dcb_app`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct App {
    pub selector: u8,
    pub priority: u8,
    pub protocol: u16,
}

/// What DCB says about one netdev.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Dcb {
    pub pfc: Option<Pfc>,
    pub apps: Vec<App>,
}

impl Dcb {
    /// "dscp" when the APP table maps DSCP values (mlx5 then classifies by DSCP), else "pcp".
    pub fn trust(&self) -> &'static str {
        if self.apps.iter().any(|a| a.selector == SEL_DSCP) {
            "dscp"
        } else {
            "pcp"
        }
    }

    /// The priority DSCP `dscp` maps to.
    pub fn dscp_priority(&self, dscp: u8) -> Option<u8> {
        self.apps
            .iter()
            .find(|a| a.selector == SEL_DSCP && a.protocol == u16::from(dscp))
            .map(|a| a.priority)
    }
}

// --- netlink (include/uapi/linux/netlink.h, rtnetlink.h, dcbnl.h) ---

pub const RTM_GETDCB: u16 = 78;
const NLM_F_REQUEST: u16 = 1;
pub const NLMSG_ERROR: u16 = 2;
pub const DCB_CMD_IEEE_GET: u8 = 21;
const DCB_ATTR_IFNAME: u16 = 1;
const DCB_ATTR_IEEE: u16 = 13;
const DCB_ATTR_IEEE_PFC: u16 = 2;
const DCB_ATTR_IEEE_APP_TABLE: u16 = 3;
const DCB_ATTR_IEEE_APP: u16 = 1;
const DCB_ATTR_DCB_APP: u16 = 2;
const NLA_TYPE_MASK: u16 = 0x3fff;
const NLMSG_HDR: usize = 16;
const DCBMSG: usize = 4;
/// `struct ieee_pfc`: cap, en, mbc, pad, delay, then `requests[8]` and `indications[8]` (u64).
const IEEE_PFC_LEN: usize = 136;

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// The `RTM_GETDCB` / `DCB_CMD_IEEE_GET` request for `ifname`.
pub fn ieee_get_request(ifname: &str, seq: u32) -> Vec<u8> {
    let name_len = ifname.len() + 1;
    let attr_len = 4 + name_len;
    let len = NLMSG_HDR + DCBMSG + align4(attr_len);
    let mut m = Vec::with_capacity(len);
    m.extend_from_slice(&(len as u32).to_ne_bytes());
    m.extend_from_slice(&RTM_GETDCB.to_ne_bytes());
    m.extend_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    m.extend_from_slice(&seq.to_ne_bytes());
    m.extend_from_slice(&0u32.to_ne_bytes());
    m.extend_from_slice(&[0, DCB_CMD_IEEE_GET, 0, 0]);
    m.extend_from_slice(&(attr_len as u16).to_ne_bytes());
    m.extend_from_slice(&DCB_ATTR_IFNAME.to_ne_bytes());
    m.extend_from_slice(ifname.as_bytes());
    m.push(0);
    m.resize(len, 0);
    m
}

/// Netlink attributes of `buf`: (type without flags, payload). Stops at the first malformed one.
fn attrs(buf: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    let mut at = 0usize;
    std::iter::from_fn(move || {
        let h = buf.get(at..at + 4)?;
        let len = usize::from(u16::from_ne_bytes([h[0], h[1]]));
        let ty = u16::from_ne_bytes([h[2], h[3]]) & NLA_TYPE_MASK;
        let payload = buf.get(at + 4..at + len.max(4))?;
        if len < 4 {
            return None;
        }
        at += align4(len);
        Some((ty, payload))
    })
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .map_or(0, |s| u64::from_ne_bytes(s.try_into().unwrap_or([0; 8])))
}

/// The kernel's answer to [`ieee_get_request`]: the DCB state, or the errno it returned.
pub fn parse_ieee_reply(msg: &[u8]) -> Result<Dcb, i32> {
    let Some(h) = msg.get(..NLMSG_HDR) else {
        return Err(libc_eproto());
    };
    let ty = u16::from_ne_bytes([h[4], h[5]]);
    if ty == NLMSG_ERROR {
        let code = msg
            .get(NLMSG_HDR..NLMSG_HDR + 4)
            .map_or(-libc_eproto(), |b| {
                i32::from_ne_bytes([b[0], b[1], b[2], b[3]])
            });
        return Err(-code);
    }
    if ty != RTM_GETDCB {
        return Err(libc_eproto());
    }
    let len = (u32::from_ne_bytes([h[0], h[1], h[2], h[3]]) as usize).min(msg.len());
    let body = msg.get(NLMSG_HDR + DCBMSG..len).unwrap_or(&[]);
    let mut dcb = Dcb::default();
    for (t, p) in attrs(body) {
        if t != DCB_ATTR_IEEE {
            continue;
        }
        for (t, p) in attrs(p) {
            match t {
                DCB_ATTR_IEEE_PFC if p.len() >= IEEE_PFC_LEN => {
                    let mut pfc = Pfc {
                        cap: p[0],
                        ..Default::default()
                    };
                    for i in 0..8 {
                        pfc.enabled[i] = p[1] & (1 << i) != 0;
                        pfc.requests[i] = u64_at(p, 8 + 8 * i);
                        pfc.indications[i] = u64_at(p, 72 + 8 * i);
                    }
                    dcb.pfc = Some(pfc);
                }
                DCB_ATTR_IEEE_APP_TABLE => {
                    for (t, a) in attrs(p) {
                        if (t == DCB_ATTR_IEEE_APP || t == DCB_ATTR_DCB_APP) && a.len() >= 4 {
                            dcb.apps.push(App {
                                selector: a[0],
                                priority: a[1],
                                protocol: u16::from_ne_bytes([a[2], a[3]]),
                            });
                        }
                    }
                }
                _ => {}
            }
        }
    }
    Ok(dcb)
}

const fn libc_eproto() -> i32 {
    71
}

// --- saved command output ---

/// `dcb pfc show dev IF` (optionally with `-s`): `pfc-cap 8 ...`, `prio-pfc 0:off 3:on ...`,
/// `requests 0:0 ...`, `indications 0:0 ...`.
pub fn parse_dcb_pfc(text: &str) -> Option<Pfc> {
    let mut pfc = Pfc::default();
    let mut seen = false;
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut key = "";
    for w in words {
        if let Some((p, v)) = w.split_once(':') {
            let Ok(p) = p.parse::<usize>() else { continue };
            if p > 7 {
                continue;
            }
            match key {
                "prio-pfc" => {
                    pfc.enabled[p] = v == "on";
                    seen = true;
                }
                "requests" => pfc.requests[p] = v.parse().unwrap_or(0),
                "indications" => pfc.indications[p] = v.parse().unwrap_or(0),
                _ => {}
            }
        } else if key == "pfc-cap" {
            pfc.cap = w.parse().unwrap_or(0);
            key = "";
        } else {
            key = w;
        }
    }
    seen.then_some(pfc)
}

/// `dcb app show dev IF`: `dscp-prio 24:3 26:3`, `pcp-prio 3:3`, `ethtype-prio 0x8915:3`, ...
pub fn parse_dcb_app(text: &str) -> Vec<App> {
    let mut apps = Vec::new();
    let mut selector = None;
    for w in text.split_whitespace() {
        match w {
            "ethtype-prio" => selector = Some(1u8),
            "stream-port-prio" => selector = Some(2),
            "dgram-port-prio" => selector = Some(3),
            "port-prio" => selector = Some(4),
            "dscp-prio" => selector = Some(SEL_DSCP),
            _ => {
                let (Some(sel), Some((k, p))) = (selector, w.split_once(':')) else {
                    continue;
                };
                let protocol = match k.strip_prefix("0x") {
                    Some(h) => u16::from_str_radix(h, 16).ok(),
                    None => k.parse().ok(),
                };
                if let (Some(protocol), Ok(priority)) = (protocol, p.parse()) {
                    apps.push(App {
                        selector: sel,
                        priority,
                        protocol,
                    });
                }
            }
        }
    }
    apps
}

/// `ethtool -S IF`: `     name: value` lines (the first line is a header).
pub fn parse_ethtool_stats(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.trim().split_once(':')?;
            Some((k.trim().to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// The pause-related statistics of a netdev (`rx_prio3_pause`, `tx_pause_ctrl_phy`, ...).
pub fn pause_counters(stats: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    stats
        .iter()
        .filter(|(k, _)| k.to_ascii_lowercase().contains("pause"))
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nla(ty: u16, payload: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&((4 + payload.len()) as u16).to_ne_bytes());
        v.extend_from_slice(&ty.to_ne_bytes());
        v.extend_from_slice(payload);
        v.resize(align4(v.len()), 0);
        v
    }

    fn reply(attrs: &[u8]) -> Vec<u8> {
        let len = NLMSG_HDR + DCBMSG + attrs.len();
        let mut m = Vec::new();
        m.extend_from_slice(&(len as u32).to_ne_bytes());
        m.extend_from_slice(&RTM_GETDCB.to_ne_bytes());
        m.extend_from_slice(&0u16.to_ne_bytes());
        m.extend_from_slice(&[0; 8]);
        m.extend_from_slice(&[0, DCB_CMD_IEEE_GET, 0, 0]);
        m.extend_from_slice(attrs);
        m
    }

    #[test]
    fn request_layout() {
        let m = ieee_get_request("eth0", 7);
        assert_eq!(m.len(), 32);
        assert_eq!(u32::from_ne_bytes(m[0..4].try_into().unwrap()), 32);
        assert_eq!(u16::from_ne_bytes([m[4], m[5]]), RTM_GETDCB);
        assert_eq!(m[17], DCB_CMD_IEEE_GET);
        assert_eq!(&m[24..29], b"eth0\0");
    }

    #[test]
    fn parses_pfc_and_app_table() {
        let mut pfc = vec![0u8; IEEE_PFC_LEN];
        pfc[0] = 8;
        pfc[1] = 1 << 3;
        pfc[8 + 24..8 + 32].copy_from_slice(&42u64.to_ne_bytes());
        pfc[72 + 24..72 + 32].copy_from_slice(&7u64.to_ne_bytes());
        let app = nla(DCB_ATTR_IEEE_APP, &[SEL_DSCP, 3, 26, 0]);
        let mut ieee = nla(DCB_ATTR_IEEE_PFC, &pfc);
        ieee.extend(nla(DCB_ATTR_IEEE_APP_TABLE, &app));
        let mut top = nla(DCB_ATTR_IFNAME, b"eth0\0");
        top.extend(nla(DCB_ATTR_IEEE | 0x8000, &ieee));
        let d = parse_ieee_reply(&reply(&top)).unwrap();
        let p = d.pfc.clone().unwrap();
        assert_eq!(p.cap, 8);
        assert_eq!(
            p.enabled,
            [false, false, false, true, false, false, false, false]
        );
        assert_eq!((p.requests[3], p.indications[3]), (42, 7));
        assert_eq!(d.trust(), "dscp");
        assert_eq!(d.dscp_priority(26), Some(3));
    }

    #[test]
    fn errors_and_garbage() {
        let mut e = vec![0u8; 20];
        e[0..4].copy_from_slice(&20u32.to_ne_bytes());
        e[4..6].copy_from_slice(&NLMSG_ERROR.to_ne_bytes());
        e[16..20].copy_from_slice(&(-95i32).to_ne_bytes());
        assert_eq!(parse_ieee_reply(&e), Err(95));
        assert!(parse_ieee_reply(&[1, 2, 3]).is_err());
        let mut bad = reply(&[0xff, 0xff, 13, 0, 1]);
        bad.truncate(23);
        assert_eq!(parse_ieee_reply(&bad), Ok(Dcb::default()));
    }

    #[test]
    fn parses_dcb_tool_output() {
        let p = parse_dcb_pfc(
            "pfc-cap 8 macsec-bypass off delay 4096\nprio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\nrequests 0:0 1:0 2:0 3:12 4:0 5:0 6:0 7:0\nindications 0:0 1:0 2:0 3:5 4:0 5:0 6:0 7:0\n",
        )
        .unwrap();
        assert_eq!(p.cap, 8);
        assert!(p.enabled[3] && !p.enabled[4]);
        assert_eq!((p.requests[3], p.indications[3]), (12, 5));
        assert!(parse_dcb_pfc("Error: no DCB support").is_none());
        let apps = parse_dcb_app("dscp-prio 24:3 26:3 46:5\nethtype-prio 0x8915:3\n");
        assert_eq!(apps.len(), 4);
        assert_eq!(
            apps[3],
            App {
                selector: 1,
                priority: 3,
                protocol: 0x8915
            }
        );
        let d = Dcb { pfc: None, apps };
        assert_eq!((d.trust(), d.dscp_priority(26)), ("dscp", Some(3)));
    }

    #[test]
    fn parses_ethtool_stats() {
        let s = parse_ethtool_stats("NIC statistics:\n     rx_packets: 10\n     rx_prio3_pause: 5\n     tx_prio3_pause: 0\n     rx_pause_ctrl_phy: 5\n");
        assert_eq!(s.len(), 4);
        let p = pause_counters(&s);
        assert_eq!(
            p.keys().collect::<Vec<_>>(),
            ["rx_pause_ctrl_phy", "rx_prio3_pause", "tx_prio3_pause"]
        );
    }
}
