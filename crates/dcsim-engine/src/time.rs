//! Simulated time in integer picoseconds, and link rates.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// An instant of simulated time, in picoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A duration of simulated time, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const NEVER: SimTime = SimTime(u64::MAX);

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    pub fn ps(self) -> u64 {
        self.0
    }
    /// Time elapsed since `earlier` (saturating at zero).
    pub fn since(self, earlier: SimTime) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const MAX: Dur = Dur(u64::MAX);

    pub const fn from_ns(ns: u64) -> Dur {
        Dur(ns * PS_PER_NS)
    }
    pub const fn from_us(us: u64) -> Dur {
        Dur(us * PS_PER_US)
    }
    pub const fn from_ms(ms: u64) -> Dur {
        Dur(ms * PS_PER_MS)
    }
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s * PS_PER_S)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    pub fn ps(self) -> u64 {
        self.0
    }
    pub fn saturating_mul(self, k: u64) -> Dur {
        Dur(self.0.saturating_mul(k))
    }
    pub fn saturating_add(self, d: Dur) -> Dur {
        Dur(self.0.saturating_add(d.0))
    }
}

impl Add<Dur> for SimTime {
    type Output = SimTime;
    fn add(self, d: Dur) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for SimTime {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<SimTime> for SimTime {
    type Output = Dur;
    fn sub(self, o: SimTime) -> Dur {
        Dur(self.0 - o.0)
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, o: Dur) -> Dur {
        Dur(self.0.saturating_add(o.0))
    }
}
impl AddAssign for Dur {
    fn add_assign(&mut self, o: Dur) {
        self.0 = self.0.saturating_add(o.0);
    }
}
impl Sub for Dur {
    type Output = Dur;
    fn sub(self, o: Dur) -> Dur {
        Dur(self.0.saturating_sub(o.0))
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}

fn fmt_ps(ps: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let units = [(PS_PER_S, "s"), (PS_PER_MS, "ms"), (PS_PER_US, "us"), (PS_PER_NS, "ns")];
    for (scale, name) in units {
        if ps >= scale && ps.is_multiple_of(scale) {
            return write!(f, "{}{}", ps / scale, name);
        }
    }
    write!(f, "{}ps", ps)
}

/// A link rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate {
    pub bps: u64,
    /// Picoseconds per byte when that is a whole number (every common link
    /// rate: 800 at 10 Gb/s, 20 at 400 Gb/s), else 0: `tx_time` then
    /// multiplies instead of dividing 128-bit integers for every frame.
    ps_per_byte: u64,
}

impl Rate {
    pub const fn from_bps(bps: u64) -> Rate {
        const PS_BITS: u64 = 8 * PS_PER_S;
        let ps_per_byte = if bps > 0 && PS_BITS.is_multiple_of(bps) { PS_BITS / bps } else { 0 };
        Rate { bps, ps_per_byte }
    }
    pub const fn from_gbps(g: u64) -> Rate {
        Rate::from_bps(g * 1_000_000_000)
    }

    /// Serialisation time of `bytes` at this rate, rounded **up** to the next
    /// picosecond, so that a link never carries more than its rate.
    /// Exact integer arithmetic: ceil(bytes * 8 * 1e12 / bps).
    #[inline]
    pub fn tx_time(self, bytes: u64) -> Dur {
        if self.ps_per_byte != 0 {
            return Dur(bytes * self.ps_per_byte);
        }
        let num = bytes as u128 * 8 * PS_PER_S as u128;
        let bps = self.bps as u128;
        Dur(num.div_ceil(bps) as u64)
    }

    /// Bytes this rate carries in `d` (rounded down).
    pub fn bytes_in(self, d: Dur) -> u64 {
        (d.0 as u128 * self.bps as u128 / (8 * PS_PER_S as u128)) as u64
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = [(1_000_000_000_000u64, "Tbps"), (1_000_000_000, "Gbps"), (1_000_000, "Mbps"), (1_000, "Kbps")];
        for (scale, name) in units {
            if self.bps >= scale && self.bps.is_multiple_of(scale) {
                return write!(f, "{}{}", self.bps / scale, name);
            }
        }
        write!(f, "{}bps", self.bps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_is_exact_and_rounds_up() {
        // 1500 B at 10 Gb/s = 1.2 us exactly.
        assert_eq!(Rate::from_gbps(10).tx_time(1500), Dur::from_ns(1200));
        // 1 B at 3 b/s = 8/3 s -> rounded up to the next ps.
        assert_eq!(Rate::from_bps(3).tx_time(1), Dur(2_666_666_666_667));
        assert_eq!(Rate::from_gbps(400).tx_time(64), Dur(1280));
    }

    #[test]
    fn the_multiplication_shortcut_equals_the_exact_division() {
        for bps in [1_000_000_000u64, 10_000_000_000, 25_000_000_000, 40_000_000_000, 100_000_000_000, 400_000_000_000, 3, 7_000_000_000, 1_600_000] {
            let r = Rate::from_bps(bps);
            for bytes in [1u64, 64, 78, 1518, 9018, 1 << 20] {
                let exact = (bytes as u128 * 8 * PS_PER_S as u128).div_ceil(bps as u128) as u64;
                assert_eq!(r.tx_time(bytes), Dur(exact), "{bps} b/s, {bytes} B");
            }
        }
    }

    #[test]
    fn display_picks_the_largest_exact_unit() {
        assert_eq!(Dur::from_us(2).to_string(), "2us");
        assert_eq!(Dur(1500).to_string(), "1500ps");
        assert_eq!(Rate::from_gbps(10).to_string(), "10Gbps");
    }
}
