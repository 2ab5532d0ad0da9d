//! `rdmascope capture -i mlx5_0[:PORT]`: offloaded RDMA traffic through a verbs sniffer flow.

use anyhow::Result;
use rdmascope_capture::live::rdma::RdmaPort;

use crate::capture::CaptureArgs;

pub fn run(_a: &CaptureArgs, port: &RdmaPort) -> Result<()> {
    anyhow::bail!(
        "{}:{}: capturing from RDMA devices is not built yet",
        port.device,
        port.port
    )
}
