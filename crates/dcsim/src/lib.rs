//! dcsim: packet-level models of datacenter networks and transports on the
//! [`dcsim_engine`] event core.
//!
//! One packet's way through the code (one direction, no calls back up):
//! workload -> TCP endpoint -> host NIC [`port::Port`] -> link -> switch
//! (forwarding table, forwarding latency) -> egress port (AQM verdict, FIFO,
//! serialiser) -> link -> ... -> TCP endpoint, whose ACK travels back the same
//! way. Only [`world::World::dispatch`] moves packets between components.

pub mod aqm;
pub mod config;
pub mod dcqcn;
pub mod hpcc;
pub mod hscc;
pub mod ideal;
pub mod homa;
pub mod ndp;
pub mod pacer;
pub mod packet;
pub mod pcap;
pub mod pfc;
pub mod phantom;
pub mod port;
pub mod rdma;
pub mod rdma_dctcp;
pub mod results;
pub mod sched;
pub mod sojourn;
pub mod tcp;
pub mod timely;
pub mod topology;
pub mod traffic;
pub mod units;
pub mod voq;
pub mod world;

pub use config::{ConfigError, Scenario};
pub use world::{run, Progress, RunOutput};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
