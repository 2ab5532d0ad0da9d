//! Scenario generator: realistic RDMA traffic as a capture point on a 100–400 Gb/s link sees
//! it, and an exact record of what was injected (the ground truth).

#![forbid(unsafe_code)]

pub mod frames;
pub mod scenario;
pub mod sim;
pub mod truth;

pub use scenario::{generate, GenOptions, Scenario};
pub use sim::Sink;
pub use truth::Truth;
