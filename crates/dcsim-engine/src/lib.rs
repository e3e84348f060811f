//! dcsim-engine: the discrete-event core.
//!
//! Time is integer picoseconds ([`SimTime`], [`Dur`]); events are ordered by
//! `(time, sequence)` so that events scheduled for the same instant run in the
//! order they were scheduled, which makes every run with the same inputs
//! produce the same outputs. Random numbers come from per-component streams
//! derived from one master seed ([`rng`]). Nothing here knows about networks.

pub mod queue;
pub mod rng;
pub mod time;

pub use queue::EventQueue;
pub use rng::{Rng, StreamId};
pub use time::{Dur, Rate, SimTime};
