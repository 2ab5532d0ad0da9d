//! The two kernel interfaces doctor reads on the live host: DCB over rtnetlink, and the
//! ethtool statistics ioctl (`SIOCETHTOOL`: `ETHTOOL_GSSET_INFO`, `ETHTOOL_GSTRINGS`,
//! `ETHTOOL_GSTATS`). Each `unsafe` block is one system call on buffers sized for it.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::dcb::{self, Dcb};

fn socket(domain: i32, ty: i32, proto: i32) -> io::Result<OwnedFd> {
    // SAFETY: plain system call; the result is checked.
    let fd = unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, proto) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// DCB state of `ifname` from the kernel (`Err` carries the errno text, e.g. "Operation not
/// supported" when the driver has no DCB operations).
pub fn dcb(ifname: &str) -> Result<Dcb, String> {
    let fd =
        socket(libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE).map_err(|e| e.to_string())?;
    let req = dcb::ieee_get_request(ifname, 1);
    // SAFETY: `req` is a valid buffer of the length passed; the kernel is the destination
    // (an unbound netlink socket sends to pid 0).
    let n = unsafe { libc::send(fd.as_raw_fd(), req.as_ptr().cast(), req.len(), 0) };
    if n < 0 {
        return Err(io::Error::last_os_error().to_string());
    }
    let tv = libc::timeval {
        tv_sec: 2,
        tv_usec: 0,
    };
    // SAFETY: sets a receive timeout from a valid timeval.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    let mut buf = vec![0u8; 64 << 10];
    // SAFETY: receives into `buf`, whose length is passed.
    let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < 0 {
        return Err(io::Error::last_os_error().to_string());
    }
    dcb::parse_ieee_reply(&buf[..n as usize])
        .map_err(|errno| io::Error::from_raw_os_error(errno).to_string())
}

const SIOCETHTOOL: libc::c_ulong = 0x8946;
const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GSTATS: u32 = 0x1d;
const ETHTOOL_GSSET_INFO: u32 = 0x37;
const ETH_SS_STATS: u32 = 1;
const ETH_GSTRING_LEN: usize = 32;

#[repr(C)]
struct IfReq {
    name: [u8; 16],
    data: *mut u8,
    _pad: [u8; 16],
}

fn ethtool(fd: &OwnedFd, ifname: &str, buf: &mut [u64]) -> io::Result<()> {
    let mut ifr = IfReq {
        name: [0; 16],
        data: buf.as_mut_ptr().cast(),
        _pad: [0; 16],
    };
    let n = ifname.len().min(15);
    ifr.name[..n].copy_from_slice(&ifname.as_bytes()[..n]);
    // SAFETY: `ifr.data` points to `buf`, which the caller sized for the command it holds.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), SIOCETHTOOL as _, &mut ifr) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// All ethtool statistics of `ifname` (what `ethtool -S` prints).
pub fn ethtool_stats(ifname: &str) -> Result<BTreeMap<String, u64>, String> {
    let fd = socket(libc::AF_INET, libc::SOCK_DGRAM, 0).map_err(|e| e.to_string())?;
    // struct ethtool_sset_info { u32 cmd; u32 reserved; u64 sset_mask; u32 data[1]; }
    let mut info = [0u64; 3];
    bytes_mut(&mut info)[0..4].copy_from_slice(&ETHTOOL_GSSET_INFO.to_ne_bytes());
    info[1] = 1u64 << ETH_SS_STATS;
    ethtool(&fd, ifname, &mut info).map_err(|e| e.to_string())?;
    if info[1] & (1 << ETH_SS_STATS) == 0 {
        return Ok(BTreeMap::new());
    }
    let count = (info[2] & 0xffff_ffff) as usize;
    if count == 0 || count > 1 << 16 {
        return Ok(BTreeMap::new());
    }
    // struct ethtool_gstrings { u32 cmd; u32 string_set; u32 len; u8 data[]; }
    let mut strings = vec![0u64; (12 + count * ETH_GSTRING_LEN).div_ceil(8)];
    {
        let b = bytes_mut(&mut strings);
        b[0..4].copy_from_slice(&ETHTOOL_GSTRINGS.to_ne_bytes());
        b[4..8].copy_from_slice(&ETH_SS_STATS.to_ne_bytes());
        b[8..12].copy_from_slice(&(count as u32).to_ne_bytes());
    }
    ethtool(&fd, ifname, &mut strings).map_err(|e| e.to_string())?;
    // struct ethtool_stats { u32 cmd; u32 n_stats; u64 data[]; }
    let mut stats = vec![0u64; 1 + count];
    {
        let b = bytes_mut(&mut stats);
        b[0..4].copy_from_slice(&ETHTOOL_GSTATS.to_ne_bytes());
        b[4..8].copy_from_slice(&(count as u32).to_ne_bytes());
    }
    ethtool(&fd, ifname, &mut stats).map_err(|e| e.to_string())?;
    let names = &bytes_mut(&mut strings)[12..12 + count * ETH_GSTRING_LEN].to_vec();
    Ok(names
        .chunks(ETH_GSTRING_LEN)
        .zip(&stats[1..])
        .map(|(n, v)| {
            let end = n.iter().position(|&c| c == 0).unwrap_or(n.len());
            (String::from_utf8_lossy(&n[..end]).into_owned(), *v)
        })
        .collect())
}

fn bytes_mut(v: &mut [u64]) -> &mut [u8] {
    // SAFETY: u64 has no padding and any byte pattern is a valid u64; the slice covers exactly
    // the vector's memory and borrows it mutably.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), std::mem::size_of_val(v)) }
}
