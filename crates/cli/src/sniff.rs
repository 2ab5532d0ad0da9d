//! `rdmascope capture -i mlx5_0[:PORT]`: offloaded RDMA traffic through a verbs sniffer flow.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Result;
use rdmascope_capture::live::rdma::RdmaPort;
use rdmascope_capture::live::{self, verbs::Sniffer};
use rdmascope_capture::output::OutputInterface;

use crate::capture::{analyze_after, status_line, CaptureArgs, Sink, State, MAX_SNAPLEN};

const LINKTYPE_ETHERNET: u16 = 1;
const LINKTYPE_INFINIBAND: u16 = 247;

pub fn run(a: &CaptureArgs, port: &RdmaPort) -> Result<()> {
    if a.filter.is_some() {
        anyhow::bail!(
            "-f filters apply to network interfaces; an RDMA device sniffer takes every \
             packet of the port (filter afterwards with `show -Y`)"
        );
    }
    let snaplen = if a.snaplen == 0 {
        MAX_SNAPLEN
    } else {
        a.snaplen
    };
    let mut sniffer = Sniffer::open(&port.device, port.port.min(255) as u8)?;
    let linktype = if port.is_infiniband() {
        LINKTYPE_INFINIBAND
    } else {
        LINKTYPE_ETHERNET
    };
    let name = format!("{}:{}", port.device, port.port);
    let mut sink = Sink::create(
        a,
        OutputInterface {
            linktype,
            snaplen,
            name: name.clone(),
            speed_bps: None,
        },
    )?;
    let stop = live::signals::stop_flag();
    eprintln!(
        "rdmascope: capturing on {name} ({} link, verbs sniffer flow, snaplen {snaplen}); Ctrl-C stops",
        port.link_layer
    );
    let show_status = a.status || std::io::IsTerminal::is_terminal(&std::io::stderr());
    let start = Instant::now();
    let mut last_status = start;
    let mut st = State::default();
    let limit = a.count.unwrap_or(u64::MAX);
    let mut error = None;
    while !stop.load(Ordering::Acquire)
        && st.packets < limit
        && a.duration.is_none_or(|d| start.elapsed() < d)
    {
        let n = sniffer.poll(|p| {
            if error.is_some() || st.packets >= limit {
                return;
            }
            let ts_ns = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            let cut = &p.data[..p.data.len().min(snaplen as usize)];
            st.packets += 1;
            st.bytes += p.data.len() as u64;
            if let Err(e) = sink.write(st.packets, ts_ns, p.data.len() as u32, cut) {
                error = Some(e);
            }
        })?;
        if error.is_some() {
            break;
        }
        if n == 0 {
            std::thread::sleep(Duration::from_micros(50));
        }
        if show_status && last_status.elapsed() >= Duration::from_secs(1) {
            last_status = Instant::now();
            status_line(&st, start.elapsed());
        }
    }
    let errors = sniffer.errors;
    drop(sniffer);
    let files = sink.finish();
    eprintln!(
        "rdmascope: {} packets captured ({} bytes) in {:.1} s on {name}; {errors} receive \
         completions with an error; drops inside the NIC are in its own counters \
         (ethtool -S: rx_out_of_buffer, rx_discards_phy)",
        st.packets,
        st.bytes,
        start.elapsed().as_secs_f64()
    );
    if let Some(e) = error {
        return Err(e);
    }
    analyze_after(a, &files?)
}
