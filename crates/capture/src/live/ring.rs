//! Linux AF_PACKET sockets: a TPACKET_V3 memory-mapped receive ring (packet(7),
//! Documentation/networking/packet_mmap.rst) and a plain `SOCK_RAW` sender.
//!
//! This is the only place in the crate that talks to the kernel directly. Every `unsafe`
//! block is a system call with a checked return value, or an access to the ring whose
//! bounds are checked against the mapping first.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::bpf::Insn;
use super::LiveError;

const ETH_P_ALL: u16 = 0x0003;

/// Block status word: offset of `hdr.bh1.block_status` in `struct tpacket_block_desc`.
const BLOCK_STATUS: usize = 8;
const BLOCK_NUM_PKTS: usize = 12;
const BLOCK_FIRST: usize = 16;
const BLOCK_LEN: usize = 20;

/// Offsets inside `struct tpacket3_hdr`.
mod hdr3 {
    pub const NEXT: usize = 0;
    pub const SEC: usize = 4;
    pub const NSEC: usize = 8;
    pub const SNAPLEN: usize = 12;
    pub const LEN: usize = 16;
    pub const STATUS: usize = 20;
    pub const MAC: usize = 24;
    pub const VLAN_TCI: usize = 32;
    pub const VLAN_TPID: usize = 36;
    pub const SIZE: usize = 48;
}

/// One received frame, borrowed from the ring.
#[derive(Debug, Clone, Copy)]
pub struct RingPacket<'a> {
    pub ts_ns: u64,
    /// Length on the wire (without a VLAN tag the kernel moved into metadata).
    pub orig_len: u32,
    pub data: &'a [u8],
    /// A VLAN tag the NIC or driver stripped (`TP_STATUS_VLAN_VALID`): (TPID, TCI).
    pub vlan: Option<(u16, u16)>,
}

/// The kernel's own counters for a socket (`PACKET_STATISTICS`, `struct tpacket_stats_v3`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketStats {
    /// Packets the filter accepted (including those dropped).
    pub packets: u64,
    /// Accepted packets dropped because the ring was full.
    pub drops: u64,
}

fn last_os_error(what: &'static str, iface: &str) -> LiveError {
    LiveError::from_os(what, iface, io::Error::last_os_error())
}

fn read_u32(mem: &[u8], at: usize) -> u32 {
    mem.get(at..at + 4)
        .map_or(0, |b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
}

fn read_u16(mem: &[u8], at: usize) -> u16 {
    mem.get(at..at + 2)
        .map_or(0, |b| u16::from_ne_bytes([b[0], b[1]]))
}

fn setsockopt<T>(fd: RawFd, level: i32, name: i32, value: &T) -> io::Result<()> {
    // SAFETY: `value` points to a live `T` of the given size for the duration of the call.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The interface index of `iface`, or a "no such interface" error naming the ones that exist.
pub fn if_index(iface: &str) -> Result<i32, LiveError> {
    let name = CString::new(iface).map_err(|_| LiveError::NoSuchInterface {
        iface: iface.to_string(),
        available: interfaces(),
    })?;
    // SAFETY: `name` is a valid NUL-terminated string.
    let idx = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if idx == 0 {
        return Err(LiveError::NoSuchInterface {
            iface: iface.to_string(),
            available: interfaces(),
        });
    }
    Ok(idx as i32)
}

/// Network interfaces of this namespace, from /sys/class/net.
pub fn interfaces() -> Vec<String> {
    super::rdma::names(std::path::Path::new("/sys/class/net"))
}

/// A packet socket for protocol 0, which receives nothing until `bind` names a protocol,
/// so no unfiltered frame from another interface is queued before the filter is attached.
fn packet_socket(iface: &str) -> Result<OwnedFd, LiveError> {
    // SAFETY: plain system call; the result is checked.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(last_os_error("opening a packet socket", iface));
    }
    // SAFETY: `fd` is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn bind(fd: RawFd, ifindex: i32, protocol: u16, iface: &str) -> Result<(), LiveError> {
    // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = protocol.to_be();
    sll.sll_ifindex = ifindex;
    // SAFETY: `sll` is a valid sockaddr_ll of the size passed.
    let rc = unsafe {
        libc::bind(
            fd,
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(last_os_error("binding the packet socket", iface));
    }
    Ok(())
}

/// Ring geometry.
#[derive(Debug, Clone, Copy)]
pub struct RingConfig {
    pub block_size: u32,
    pub block_count: u32,
    /// A block is handed to user space after this long even when not full.
    pub block_timeout_ms: u32,
}

impl RingConfig {
    /// About `bytes` of ring in 4 MiB blocks (at least 4 blocks).
    pub fn with_size(bytes: usize) -> Self {
        let block_size = 4u32 << 20;
        let block_count = (bytes / block_size as usize).clamp(4, 4096) as u32;
        Self {
            block_size,
            block_count,
            block_timeout_ms: 10,
        }
    }
}

/// A TPACKET_V3 receive ring bound to one interface.
pub struct RxRing {
    fd: OwnedFd,
    map: *mut u8,
    map_len: usize,
    cfg: RingConfig,
    next_block: u32,
    iface: String,
}

// SAFETY: the mapping is owned by this value and only accessed through `&mut self`.
unsafe impl Send for RxRing {}

impl RxRing {
    /// Opens the socket, attaches `filter` before binding (so nothing unfiltered is queued),
    /// maps the ring and, with `promisc`, puts the interface into promiscuous mode for the
    /// socket's lifetime.
    pub fn open(
        iface: &str,
        filter: &[Insn],
        cfg: RingConfig,
        promisc: bool,
    ) -> Result<Self, LiveError> {
        let ifindex = if_index(iface)?;
        let fd = packet_socket(iface)?;
        let raw = fd.as_raw_fd();
        attach_filter(raw, filter)
            .map_err(|e| LiveError::from_os("attaching the filter", iface, e))?;
        let version = libc::tpacket_versions::TPACKET_V3 as i32;
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_VERSION, &version)
            .map_err(|e| LiveError::from_os("selecting TPACKET_V3", iface, e))?;
        let req = libc::tpacket_req3 {
            tp_block_size: cfg.block_size,
            tp_block_nr: cfg.block_count,
            tp_frame_size: 2048,
            tp_frame_nr: cfg.block_size / 2048 * cfg.block_count,
            tp_retire_blk_tov: cfg.block_timeout_ms,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_RX_RING, &req)
            .map_err(|e| LiveError::from_os("creating the receive ring", iface, e))?;
        let map_len = cfg.block_size as usize * cfg.block_count as usize;
        // SAFETY: maps the ring the kernel just created for this socket; checked below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_LOCKED,
                raw,
                0,
            )
        };
        let map = if map == libc::MAP_FAILED {
            // MAP_LOCKED fails under a small RLIMIT_MEMLOCK; retry unlocked.
            // SAFETY: as above.
            let m = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    map_len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    raw,
                    0,
                )
            };
            if m == libc::MAP_FAILED {
                return Err(last_os_error("mapping the receive ring", iface));
            }
            m
        } else {
            map
        };
        let ring = Self {
            fd,
            map: map.cast(),
            map_len,
            cfg,
            next_block: 0,
            iface: iface.to_string(),
        };
        if promisc {
            // SAFETY: packet_mreq is plain old data.
            let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
            mreq.mr_ifindex = ifindex;
            mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
            setsockopt(raw, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)
                .map_err(|e| LiveError::from_os("enabling promiscuous mode", iface, e))?;
        }
        bind(raw, ifindex, ETH_P_ALL, iface)?;
        // Drop whatever the counters saw before the capture started.
        let _ = ring.stats();
        Ok(ring)
    }

    fn block(&self, i: u32) -> &[u8] {
        let size = self.cfg.block_size as usize;
        // SAFETY: block `i` lies inside the mapping (i < block_count), which lives as long
        // as `self`; the kernel does not write a block while its status says TP_STATUS_USER.
        unsafe { std::slice::from_raw_parts(self.map.add(i as usize * size), size) }
    }

    fn status(&self, i: u32) -> &AtomicU32 {
        let size = self.cfg.block_size as usize;
        // SAFETY: the status word is 4-byte aligned inside block `i` of the mapping; the
        // kernel and we hand the block back and forth through it.
        unsafe { &*(self.map.add(i as usize * size + BLOCK_STATUS) as *const AtomicU32) }
    }

    /// Waits up to `timeout` for a filled block and calls `each` for every packet in it (and
    /// in any further filled blocks). Returns the number of packets seen.
    pub fn poll(
        &mut self,
        timeout: Duration,
        mut each: impl FnMut(RingPacket<'_>),
    ) -> Result<u64, LiveError> {
        if self.status(self.next_block).load(Ordering::Acquire) & libc::TP_STATUS_USER == 0 {
            let mut pfd = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN | libc::POLLERR,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let rc = unsafe {
                libc::poll(
                    &mut pfd,
                    1,
                    timeout.as_millis().min(i32::MAX as u128) as i32,
                )
            };
            if rc < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    return Ok(0);
                }
                return Err(LiveError::from_os("waiting for packets", &self.iface, e));
            }
            if pfd.revents & libc::POLLERR != 0 {
                let mut err: i32 = 0;
                let mut len = std::mem::size_of::<i32>() as libc::socklen_t;
                // SAFETY: reads (and clears) the pending socket error into `err`.
                unsafe {
                    libc::getsockopt(
                        self.fd.as_raw_fd(),
                        libc::SOL_SOCKET,
                        libc::SO_ERROR,
                        (&mut err as *mut i32).cast(),
                        &mut len,
                    )
                };
                if err == libc::ENETDOWN || err == libc::ENXIO || err == libc::ENODEV {
                    return Err(LiveError::from_os(
                        "capturing",
                        &self.iface,
                        io::Error::from_raw_os_error(err),
                    ));
                }
            }
        }
        let mut n = 0;
        for _ in 0..self.cfg.block_count {
            let i = self.next_block;
            if self.status(i).load(Ordering::Acquire) & libc::TP_STATUS_USER == 0 {
                break;
            }
            n += self.walk_block(i, &mut each);
            self.status(i)
                .store(libc::TP_STATUS_KERNEL, Ordering::Release);
            self.next_block = (i + 1) % self.cfg.block_count;
        }
        Ok(n)
    }

    fn walk_block(&self, i: u32, each: &mut impl FnMut(RingPacket<'_>)) -> u64 {
        let b = self.block(i);
        let count = read_u32(b, BLOCK_NUM_PKTS);
        let blk_len = (read_u32(b, BLOCK_LEN) as usize).min(b.len());
        let mut at = read_u32(b, BLOCK_FIRST) as usize;
        let mut n = 0;
        for _ in 0..count {
            if at + hdr3::SIZE > blk_len {
                break;
            }
            let snap = read_u32(b, at + hdr3::SNAPLEN) as usize;
            let mac = read_u16(b, at + hdr3::MAC) as usize;
            let Some(data) = b.get(at + mac..at + mac + snap) else {
                break;
            };
            let status = read_u32(b, at + hdr3::STATUS);
            let vlan = (status & libc::TP_STATUS_VLAN_VALID != 0).then(|| {
                let tpid = if status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                    read_u16(b, at + hdr3::VLAN_TPID)
                } else {
                    0x8100
                };
                (tpid, read_u32(b, at + hdr3::VLAN_TCI) as u16)
            });
            let ts_ns = u64::from(read_u32(b, at + hdr3::SEC)) * 1_000_000_000
                + u64::from(read_u32(b, at + hdr3::NSEC));
            each(RingPacket {
                ts_ns,
                orig_len: read_u32(b, at + hdr3::LEN),
                data,
                vlan,
            });
            n += 1;
            let next = read_u32(b, at + hdr3::NEXT) as usize;
            if next == 0 {
                break;
            }
            at += next;
        }
        n
    }

    /// Counters since the previous call (the kernel resets them on every read).
    pub fn stats(&self) -> SocketStats {
        let mut st = libc::tpacket_stats_v3 {
            tp_packets: 0,
            tp_drops: 0,
            tp_freeze_q_cnt: 0,
        };
        let mut len = std::mem::size_of::<libc::tpacket_stats_v3>() as libc::socklen_t;
        // SAFETY: `st` is large enough for the TPACKET_V3 statistics the kernel writes.
        let rc = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                (&mut st as *mut libc::tpacket_stats_v3).cast(),
                &mut len,
            )
        };
        if rc != 0 {
            return SocketStats::default();
        }
        SocketStats {
            packets: u64::from(st.tp_packets),
            drops: u64::from(st.tp_drops),
        }
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the region mapped in `open`; nothing borrows it any more.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}

fn attach_filter(fd: RawFd, prog: &[Insn]) -> io::Result<()> {
    let insns: Vec<libc::sock_filter> = prog
        .iter()
        .map(|i| libc::sock_filter {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        })
        .collect();
    let fprog = libc::sock_fprog {
        len: insns.len() as u16,
        filter: insns.as_ptr() as *mut libc::sock_filter,
    };
    setsockopt(fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &fprog)
}

/// A raw Ethernet sender bound to one interface.
pub struct TxSocket {
    fd: OwnedFd,
    iface: String,
}

impl TxSocket {
    pub fn open(iface: &str) -> Result<Self, LiveError> {
        let ifindex = if_index(iface)?;
        let fd = packet_socket(iface)?;
        // Protocol 0: this socket only sends and never queues a received frame.
        bind(fd.as_raw_fd(), ifindex, 0, iface)?;
        let big: i32 = 8 << 20;
        let _ = setsockopt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF, &big);
        Ok(Self {
            fd,
            iface: iface.to_string(),
        })
    }

    /// Sends one frame, waiting while the device queue is full (`ENOBUFS`/`EAGAIN`).
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        loop {
            // SAFETY: `frame` is a valid buffer of the length passed.
            let rc =
                unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
            if rc >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::ENOBUFS) | Some(libc::EAGAIN) => {
                    std::thread::sleep(Duration::from_micros(50));
                }
                Some(libc::EINTR) => {}
                _ => return Err(e),
            }
        }
    }

    pub fn iface(&self) -> &str {
        &self.iface
    }
}
