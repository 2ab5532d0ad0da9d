//! One streaming pass over decoded RDMA packets: per-flow PSN tracking, AETH accounting,
//! latencies, message reassembly, ECN/CNP, PFC episodes, MTU checks, CM connections, and
//! plain-language findings. The result is a [`report::Report`]; rendering happens elsewhere.

#![forbid(unsafe_code)]

mod analyzer;
mod findings;
mod fxhash;
mod late;
mod pack;
pub mod psn;
mod quick;
pub mod report;

pub use analyzer::{
    Analyzer, Batch, Bth, Config, Dcb, Event, ExtWord, FileCut, LinkFrame, Node, PacketMeta,
};
pub use findings::application;
pub use late::{LagCopies, Lags};
pub use report::Report;
