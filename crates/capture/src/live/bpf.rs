//! Classic BPF (the kernel's `SO_ATTACH_FILTER` language, Documentation/networking/filter.rst):
//! the default RDMA filter, assembled here; user expressions, compiled by libpcap loaded at
//! run time; and an interpreter that the tests use to check the programs against real frames.

use std::collections::HashMap;

/// One classic BPF instruction (`struct sock_filter` / `struct bpf_insn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Insn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

// Instruction classes, sizes, modes and operations (linux/bpf_common.h).
const LD: u16 = 0x00;
const LDX: u16 = 0x01;
const ST: u16 = 0x02;
const STX: u16 = 0x03;
const ALU: u16 = 0x04;
const JMP: u16 = 0x05;
const RET: u16 = 0x06;
const MISC: u16 = 0x07;
const W: u16 = 0x00;
const H: u16 = 0x08;
const B: u16 = 0x10;
const IMM: u16 = 0x00;
const ABS: u16 = 0x20;
const IND: u16 = 0x40;
const MEM: u16 = 0x60;
const LEN: u16 = 0x80;
const MSH: u16 = 0xa0;
const JA: u16 = 0x00;
const JEQ: u16 = 0x10;
const JGT: u16 = 0x20;
const JGE: u16 = 0x30;
const JSET: u16 = 0x40;
const X: u16 = 0x08;
const RET_A: u16 = 0x10;

impl Insn {
    const fn new(code: u16, k: u32) -> Self {
        Self {
            code,
            jt: 0,
            jf: 0,
            k,
        }
    }

    /// `ret #k`: accept `k` bytes of the packet (0 rejects it).
    pub const fn ret(k: u32) -> Self {
        Self::new(RET, k)
    }
}

/// EtherTypes and ports the default filter keeps (`--all` keeps everything).
pub mod default_set {
    pub const VLAN_TPIDS: [u16; 2] = [0x8100, 0x88a8];
    /// RoCEv1, MAC control (PFC and PAUSE), LLDP (DCBX).
    pub const ETHERTYPES: [u16; 3] = [0x8915, 0x8808, 0x88cc];
    pub const ROCEV2_UDP_PORT: u16 = 4791;
    /// perftest's out-of-band QP exchange.
    pub const PERFTEST_TCP_PORT: u16 = 18515;
}

/// A tiny assembler with forward labels, so the filter reads like the table it implements.
#[derive(Default)]
struct Asm {
    code: Vec<(Insn, Option<&'static str>)>,
    labels: HashMap<String, usize>,
    refs: Vec<(usize, String)>,
}

impl Asm {
    fn op(&mut self, code: u16, k: u32) {
        self.code.push((Insn::new(code, k), None));
    }
    fn ld(&mut self, size: u16, off: u32) {
        self.op(LD | size | ABS, off);
    }
    fn ld_ind(&mut self, size: u16, off: u32) {
        self.op(LD | size | IND, off);
    }
    /// `ldxb 4*([off]&0xf)`: the IPv4 header length.
    fn ldx_ihl(&mut self, off: u32) {
        self.op(LDX | B | MSH, off);
    }
    /// `jeq #k, label` (falls through otherwise).
    fn jeq(&mut self, k: u32, label: String) {
        self.refs.push((self.code.len(), label));
        self.op(JMP | JEQ, k);
    }
    /// `jset #k, label`.
    fn jset(&mut self, k: u32, label: String) {
        self.refs.push((self.code.len(), label));
        self.op(JMP | JSET, k);
    }
    fn ja(&mut self, label: String) {
        self.refs.push((self.code.len(), label));
        self.op(JMP | JA, 0);
    }
    fn label(&mut self, name: String) {
        self.labels.insert(name, self.code.len());
    }
    fn finish(self) -> Vec<Insn> {
        let mut out: Vec<Insn> = self.code.into_iter().map(|(i, _)| i).collect();
        for (at, label) in self.refs {
            let target = self.labels[&label];
            let rel = target - at - 1;
            if out[at].code == JMP | JA {
                out[at].k = rel as u32;
            } else {
                out[at].jt = u8::try_from(rel).expect("filter jump within 255 instructions");
            }
        }
        out
    }
}

/// The default capture filter: RoCEv2 (UDP dst 4791 over IPv4 and IPv6), RoCEv1, PFC/PAUSE,
/// LLDP, and TCP 18515, untagged or with one VLAN tag in the data (a tag the kernel moved to
/// metadata is already gone). Accepted frames are cut to `snaplen` bytes.
pub fn default_filter(snaplen: u32) -> Vec<Insn> {
    use default_set::*;
    let mut a = Asm::default();
    a.ld(H, 12);
    for tpid in VLAN_TPIDS {
        a.jeq(u32::from(tpid), "vlan".into());
    }
    body(&mut a, 0);
    a.label("vlan".into());
    a.ld(H, 16);
    body(&mut a, 4);
    a.label("accept".into());
    a.op(RET, snaplen);
    a.label("reject".into());
    a.op(RET, 0);
    a.finish()
}

/// The EtherType is in A; `o` is the VLAN tag length before the network header.
fn body(a: &mut Asm, o: u32) {
    use default_set::*;
    let l = |s: &str| format!("{s}{o}");
    for et in ETHERTYPES {
        a.jeq(u32::from(et), "accept".into());
    }
    a.jeq(0x0800, l("v4"));
    a.jeq(0x86dd, l("v6"));
    a.ja("reject".into());

    let net = 14 + o;
    for (version, proto_at) in [("v4", net + 9), ("v6", net + 6)] {
        a.label(l(version));
        a.ld(B, proto_at);
        a.jeq(17, l(&format!("{version}udp")));
        a.jeq(6, l(&format!("{version}tcp")));
        a.ja("reject".into());
        for udp in [true, false] {
            a.label(l(&format!("{version}{}", if udp { "udp" } else { "tcp" })));
            if version == "v4" {
                // Non-first fragments carry no ports; X = IPv4 header length.
                a.ld(H, net + 6);
                a.jset(0x1fff, "reject".into());
                a.ldx_ihl(net);
                l4_ports(a, udp, &|a, off| a.ld_ind(H, net + off));
            } else {
                l4_ports(a, udp, &|a, off| a.ld(H, net + 40 + off));
            }
        }
    }
}

/// UDP: destination port 4791; TCP: either port 18515. `load(a, off)` loads the half-word at
/// offset `off` of the transport header.
fn l4_ports(a: &mut Asm, udp: bool, load: &dyn Fn(&mut Asm, u32)) {
    use default_set::*;
    if udp {
        load(a, 2);
        a.jeq(u32::from(ROCEV2_UDP_PORT), "accept".into());
    } else {
        for off in [0, 2] {
            load(a, off);
            a.jeq(u32::from(PERFTEST_TCP_PORT), "accept".into());
        }
    }
    a.ja("reject".into());
}

/// Accept everything, cut to `snaplen`.
pub fn accept_all(snaplen: u32) -> Vec<Insn> {
    vec![Insn::ret(snaplen)]
}

/// Runs a classic BPF program over `pkt` the way the kernel does (out-of-bounds loads and
/// division by zero reject); returns the accepted length, 0 for rejected.
pub fn run(prog: &[Insn], pkt: &[u8]) -> u32 {
    let (mut a, mut x) = (0u32, 0u32);
    let mut mem = [0u32; 16];
    let mut pc = 0usize;
    let load = |off: u32, size: u16| -> Option<u32> {
        let off = off as usize;
        let n = match size {
            W => 4,
            H => 2,
            _ => 1,
        };
        let b = pkt.get(off..off.checked_add(n)?)?;
        Some(b.iter().fold(0u32, |acc, &v| acc << 8 | u32::from(v)))
    };
    while let Some(i) = prog.get(pc) {
        pc += 1;
        let class = i.code & 0x07;
        match class {
            LD | LDX => {
                let mode = i.code & 0xe0;
                let size = i.code & 0x18;
                let v = match mode {
                    IMM => Some(i.k),
                    ABS => load(i.k, size),
                    IND => load(x.wrapping_add(i.k), size),
                    MEM => mem.get(i.k as usize).copied(),
                    LEN => Some(pkt.len() as u32),
                    MSH => load(i.k, B).map(|b| (b & 0xf) * 4),
                    _ => None,
                };
                let Some(v) = v else { return 0 };
                if class == LD {
                    a = v;
                } else {
                    x = v;
                }
            }
            ST | STX => {
                let v = if class == ST { a } else { x };
                let Some(slot) = mem.get_mut(i.k as usize) else {
                    return 0;
                };
                *slot = v;
            }
            ALU => {
                let src = if i.code & X != 0 { x } else { i.k };
                a = match i.code & 0xf0 {
                    0x00 => a.wrapping_add(src),
                    0x10 => a.wrapping_sub(src),
                    0x20 => a.wrapping_mul(src),
                    0x30 => match a.checked_div(src) {
                        Some(v) => v,
                        None => return 0,
                    },
                    0x40 => a | src,
                    0x50 => a & src,
                    0x60 => a.checked_shl(src).unwrap_or(0),
                    0x70 => a.checked_shr(src).unwrap_or(0),
                    0x80 => a.wrapping_neg(),
                    0x90 => match a.checked_rem(src) {
                        Some(v) => v,
                        None => return 0,
                    },
                    0xa0 => a ^ src,
                    _ => return 0,
                };
            }
            JMP => {
                let src = if i.code & X != 0 { x } else { i.k };
                let op = i.code & 0xf0;
                if op == JA {
                    pc += i.k as usize;
                    continue;
                }
                let taken = match op {
                    JEQ => a == src,
                    JGT => a > src,
                    JGE => a >= src,
                    JSET => a & src != 0,
                    _ => return 0,
                };
                pc += usize::from(if taken { i.jt } else { i.jf });
            }
            RET => return if i.code & 0x18 == RET_A { a } else { i.k },
            MISC => {
                if i.code & 0xf8 == 0 {
                    x = a;
                } else {
                    a = x;
                }
            }
            _ => return 0,
        }
    }
    0
}

/// Compiles a tcpdump-style expression for Ethernet with the libpcap found at run time
/// (`libpcap.so.0.8` or `libpcap.so.1`); accepted packets are cut to `snaplen`.
pub fn compile(expr: &str, snaplen: u32) -> Result<Vec<Insn>, String> {
    libpcap::compile(expr, snaplen)
}

#[allow(unsafe_code)]
mod libpcap {
    use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

    use super::{Insn, RET};

    #[repr(C)]
    struct BpfProgram {
        len: c_uint,
        insns: *const Insn,
    }

    const NAMES: [&str; 3] = ["libpcap.so.0.8", "libpcap.so.1", "libpcap.so"];
    const DLT_EN10MB: c_int = 1;

    pub fn compile(expr: &str, snaplen: u32) -> Result<Vec<Insn>, String> {
        // SAFETY: loading libpcap runs its (trivial) initialisers; we only call the functions
        // below with the C signatures documented in pcap(3PCAP).
        let lib = NAMES
            .iter()
            .find_map(|n| unsafe { libloading::Library::new(n) }.ok())
            .ok_or_else(|| {
                "compiling a -f expression needs libpcap at run time, and none was found \
                 (install libpcap0.8, or use the default filter / --all)"
                    .to_string()
            })?;
        let cexpr = CString::new(expr).map_err(|_| "the filter contains a NUL byte".to_string())?;
        // SAFETY: symbol types match pcap(3PCAP); `p` is checked for NULL and closed on every
        // path; the program is copied out before pcap_freecode.
        unsafe {
            let open_dead: libloading::Symbol<unsafe extern "C" fn(c_int, c_int) -> *mut c_void> =
                lib.get(b"pcap_open_dead\0").map_err(|e| e.to_string())?;
            let comp: libloading::Symbol<
                unsafe extern "C" fn(
                    *mut c_void,
                    *mut BpfProgram,
                    *const c_char,
                    c_int,
                    c_uint,
                ) -> c_int,
            > = lib.get(b"pcap_compile\0").map_err(|e| e.to_string())?;
            let geterr: libloading::Symbol<unsafe extern "C" fn(*mut c_void) -> *const c_char> =
                lib.get(b"pcap_geterr\0").map_err(|e| e.to_string())?;
            let freecode: libloading::Symbol<unsafe extern "C" fn(*mut BpfProgram)> =
                lib.get(b"pcap_freecode\0").map_err(|e| e.to_string())?;
            let close: libloading::Symbol<unsafe extern "C" fn(*mut c_void)> =
                lib.get(b"pcap_close\0").map_err(|e| e.to_string())?;
            let p = open_dead(DLT_EN10MB, 262_144);
            if p.is_null() {
                return Err("libpcap could not open a compiler handle".into());
            }
            let mut prog = BpfProgram {
                len: 0,
                insns: std::ptr::null(),
            };
            let rc = comp(p, &mut prog, cexpr.as_ptr(), 1, 0xffff_ffff);
            if rc != 0 {
                let msg = CStr::from_ptr(geterr(p)).to_string_lossy().into_owned();
                close(p);
                return Err(msg);
            }
            let insns = if prog.insns.is_null() {
                Vec::new()
            } else {
                std::slice::from_raw_parts(prog.insns, prog.len as usize).to_vec()
            };
            freecode(&mut prog);
            close(p);
            Ok(insns
                .into_iter()
                .map(|mut i| {
                    if i.code == RET && i.k != 0 {
                        i.k = snaplen;
                    }
                    i
                })
                .collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a test frame carries above Ethernet.
    #[derive(Clone, Copy, Debug)]
    enum L3 {
        V4 {
            proto: u8,
            sport: u16,
            dport: u16,
            frag: u16,
            ihl: u8,
        },
        V6 {
            next: u8,
            sport: u16,
            dport: u16,
        },
        Ether(u16),
    }

    fn frame(vlan: Option<u16>, l3: L3) -> Vec<u8> {
        let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1];
        if let Some(tpid) = vlan {
            f.extend_from_slice(&tpid.to_be_bytes());
            f.extend_from_slice(&0x6064u16.to_be_bytes());
        }
        let l4 = |f: &mut Vec<u8>, sport: u16, dport: u16| {
            f.extend_from_slice(&sport.to_be_bytes());
            f.extend_from_slice(&dport.to_be_bytes());
            f.extend_from_slice(&[0; 16]);
        };
        match l3 {
            L3::V4 {
                proto,
                sport,
                dport,
                frag,
                ihl,
            } => {
                f.extend_from_slice(&0x0800u16.to_be_bytes());
                let mut ip = vec![0u8; usize::from(ihl) * 4];
                ip[0] = 0x40 | ihl;
                ip[6..8].copy_from_slice(&frag.to_be_bytes());
                ip[9] = proto;
                f.extend_from_slice(&ip);
                l4(&mut f, sport, dport);
            }
            L3::V6 { next, sport, dport } => {
                f.extend_from_slice(&0x86ddu16.to_be_bytes());
                let mut ip = [0u8; 40];
                ip[0] = 0x60;
                ip[6] = next;
                f.extend_from_slice(&ip);
                l4(&mut f, sport, dport);
            }
            L3::Ether(t) => {
                f.extend_from_slice(&t.to_be_bytes());
                f.extend_from_slice(&[0; 46]);
            }
        }
        f
    }

    fn v4(proto: u8, sport: u16, dport: u16) -> L3 {
        L3::V4 {
            proto,
            sport,
            dport,
            frag: 0x4000,
            ihl: 5,
        }
    }

    /// (frame, expected by the default filter)
    fn cases() -> Vec<(Vec<u8>, bool, &'static str)> {
        let mut v = Vec::new();
        for vlan in [None, Some(0x8100), Some(0x88a8)] {
            v.push((frame(vlan, v4(17, 49152, 4791)), true, "RoCEv2 over IPv4"));
            v.push((frame(vlan, v4(17, 4791, 53)), false, "UDP from 4791 to 53"));
            v.push((
                frame(
                    vlan,
                    L3::V4 {
                        proto: 17,
                        sport: 1,
                        dport: 4791,
                        frag: 0,
                        ihl: 7,
                    },
                ),
                true,
                "RoCEv2 over IPv4 with options",
            ));
            v.push((
                frame(
                    vlan,
                    L3::V4 {
                        proto: 17,
                        sport: 1,
                        dport: 4791,
                        frag: 0x2005,
                        ihl: 5,
                    },
                ),
                false,
                "a later IPv4 fragment",
            ));
            v.push((
                frame(vlan, v4(6, 40000, 18515)),
                true,
                "perftest TCP to 18515",
            ));
            v.push((
                frame(vlan, v4(6, 18515, 40000)),
                true,
                "perftest TCP from 18515",
            ));
            v.push((frame(vlan, v4(6, 40000, 22)), false, "ssh"));
            v.push((
                frame(
                    vlan,
                    L3::V6 {
                        next: 17,
                        sport: 9,
                        dport: 4791,
                    },
                ),
                true,
                "RoCEv2 over IPv6",
            ));
            v.push((
                frame(
                    vlan,
                    L3::V6 {
                        next: 17,
                        sport: 9,
                        dport: 4790,
                    },
                ),
                false,
                "UDP 4790 over IPv6",
            ));
            v.push((
                frame(
                    vlan,
                    L3::V6 {
                        next: 6,
                        sport: 18515,
                        dport: 1,
                    },
                ),
                true,
                "TCP 18515 over IPv6",
            ));
            v.push((
                frame(
                    vlan,
                    L3::V6 {
                        next: 58,
                        sport: 0,
                        dport: 0,
                    },
                ),
                false,
                "ICMPv6",
            ));
            v.push((frame(vlan, L3::Ether(0x8915)), true, "RoCEv1"));
            v.push((frame(vlan, L3::Ether(0x8808)), true, "PFC"));
            v.push((frame(vlan, L3::Ether(0x88cc)), true, "LLDP"));
            v.push((frame(vlan, L3::Ether(0x0806)), false, "ARP"));
        }
        v.push((vec![0u8; 10], false, "a runt"));
        v.push((
            frame(None, v4(17, 1, 4791))[..36].to_vec(),
            false,
            "cut before the UDP port",
        ));
        v
    }

    #[test]
    fn default_filter_keeps_exactly_the_rdma_set() {
        let prog = default_filter(128);
        for (f, want, what) in cases() {
            let got = run(&prog, &f);
            assert_eq!(got != 0, want, "{what}: {f:02x?}");
            if want {
                assert_eq!(got, 128, "{what}: accepted frames are cut to the snaplen");
            }
        }
    }

    #[test]
    fn accept_all_keeps_everything() {
        for (f, _, _) in cases() {
            assert_eq!(run(&accept_all(64), &f), 64);
        }
    }

    #[test]
    fn jumps_stay_inside_the_program() {
        let prog = default_filter(0xffff);
        for (i, insn) in prog.iter().enumerate() {
            if insn.code & 0x07 == JMP {
                let far = if insn.code & 0xf0 == JA {
                    insn.k as usize
                } else {
                    usize::from(insn.jt.max(insn.jf))
                };
                assert!(i + 1 + far < prog.len(), "instruction {i} jumps out");
            }
        }
        assert!(prog.len() < 4096, "BPF_MAXINSNS");
    }

    /// libpcap compiles the same set (untagged; its VLAN code reads kernel metadata that a
    /// user-space interpreter cannot see) to a program that decides every case the same way.
    #[test]
    fn agrees_with_libpcap_on_untagged_frames() {
        let expr = "udp dst port 4791 or ether proto 0x8915 or ether proto 0x8808 \
                    or ether proto 0x88cc or tcp port 18515";
        let theirs = match compile(expr, 128) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("notice: skipping the libpcap comparison: {e}");
                return;
            }
        };
        let ours = default_filter(128);
        for (f, _, what) in cases() {
            if f.len() > 13 && matches!(u16::from_be_bytes([f[12], f[13]]), 0x8100 | 0x88a8) {
                continue;
            }
            assert_eq!(run(&ours, &f) != 0, run(&theirs, &f) != 0, "{what}");
        }
    }

    #[test]
    fn compile_reports_syntax_errors() {
        if let Err(e) = compile("udp port", 64) {
            assert!(!e.is_empty());
        }
        match compile("udp port nonsense-port-name", 64) {
            Ok(_) => panic!("accepted a bad expression"),
            Err(e) => assert!(!e.is_empty()),
        }
    }

    #[test]
    fn interpreter_rejects_out_of_bounds_and_division_by_zero() {
        let oob = [Insn::new(LD | W | ABS, 1000), Insn::ret(1)];
        assert_eq!(run(&oob, &[0; 64]), 0);
        let div0 = [Insn::new(ALU | 0x30, 0), Insn::ret(1)];
        assert_eq!(run(&div0, &[0; 64]), 0);
        assert_eq!(run(&[], &[0; 64]), 0);
    }
}
