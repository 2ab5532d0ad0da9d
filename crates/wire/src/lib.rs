//! Zero-copy header views and `Repr`s for every layer an RDMA capture holds.
//!
//! Modelled on smoltcp's `wire` module: each header has a `Packet<T: AsRef<[u8]>>` view with
//! `new_checked` and byte-range `field` constants, and a `Repr` with `parse` and `emit`.
//! [`Frame::decode`] walks a whole captured frame without allocating and never panics.
//!
//! Spec references: IBTA Vol 1 (LRH/GRH/BTH/ETHs §9, MADs §13, CM §12), Annex A16 (RoCE),
//! Annex A17 (RoCEv2), IEEE 802.1Q / 802.1Qbb / 802.3x.

#![forbid(unsafe_code)]

pub mod bth;
mod bytes;
pub mod ethernet;
pub mod ext;
pub mod fields;
pub mod filter;
pub mod frame;
pub mod gre;
pub mod grh;
pub mod icrc;
pub mod ip;
pub mod link;
pub mod lldp;
pub mod lrh;
pub mod macctl;
pub mod mad;
pub mod opcode;
pub mod udp;
pub mod vxlan;

pub use fields::Value;
pub use frame::{DecodeOptions, Frame, IcrcStatus, Layer};
pub use opcode::{OpInfo, Transport};

/// The error of a header view or `Repr::parse`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The buffer is shorter than the header claims or needs.
    #[error("truncated")]
    Truncated,
    /// A field holds a value the header cannot have.
    #[error("malformed")]
    Malformed,
}

/// Result of the header parsers.
pub type Result<T> = core::result::Result<T, Error>;
