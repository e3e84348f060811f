//! Quantities with their units written out: `"10Gbps"`, `"2us"`, `"64KiB"`, `"100pkt"`.
//!
//! A bare number is never accepted for a quantity: the unit is what tells a
//! reader of the scenario what was meant. Every type parses from a string and
//! prints back to a canonical string that parses to the same value, which is
//! what the resolved scenario (and its hash) is made of.

use dcsim_engine::{Dur, Rate};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Split "12.5Gbps" into (12.5 as text, "Gbps").
fn split_number(s: &str) -> Option<(&str, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '_'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    Some((&s[..end], s[end..].trim()))
}

#[derive(Debug, PartialEq)]
enum NumError {
    Malformed,
    NotWhole,
    TooLarge,
}

/// Parse `num` (decimal, '_' allowed) times `scale` exactly into an integer.
fn scaled_integer(num: &str, scale: u64) -> Result<u64, NumError> {
    let num: String = num.chars().filter(|c| *c != '_').collect();
    let (int_part, frac_part) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num.as_str(), ""),
    };
    if (int_part.is_empty() && frac_part.is_empty())
        || !int_part.chars().all(|c| c.is_ascii_digit())
        || !frac_part.chars().all(|c| c.is_ascii_digit())
    {
        return Err(NumError::Malformed);
    }
    let int: u128 = if int_part.is_empty() { 0 } else { int_part.parse().map_err(|_| NumError::TooLarge)? };
    let mut value = int.checked_mul(scale as u128).ok_or(NumError::TooLarge)?;
    // Fraction: frac * scale / 10^len must be an integer.
    let digits = frac_part.trim_end_matches('0');
    if !digits.is_empty() {
        if digits.len() > 30 {
            return Err(NumError::NotWhole);
        }
        let frac: u128 = digits.parse().map_err(|_| NumError::Malformed)?;
        let denom = 10u128.pow(digits.len() as u32);
        let num = frac.checked_mul(scale as u128).ok_or(NumError::TooLarge)?;
        if num % denom != 0 {
            return Err(NumError::NotWhole);
        }
        value = value.checked_add(num / denom).ok_or(NumError::TooLarge)?;
    }
    u64::try_from(value).map_err(|_| NumError::TooLarge)
}

const RATE_UNITS: &[(&str, u64)] =
    &[("bps", 1), ("Kbps", 1_000), ("kbps", 1_000), ("Mbps", 1_000_000), ("Gbps", 1_000_000_000), ("Tbps", 1_000_000_000_000)];
const TIME_UNITS: &[(&str, u64)] =
    &[("ps", 1), ("ns", 1_000), ("us", 1_000_000), ("µs", 1_000_000), ("ms", 1_000_000_000), ("s", 1_000_000_000_000)];
const BYTE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("KB", 1_000),
    ("kB", 1_000),
    ("KiB", 1 << 10),
    ("MB", 1_000_000),
    ("MiB", 1 << 20),
    ("GB", 1_000_000_000),
    ("GiB", 1 << 30),
];
const PACKET_UNITS: &[&str] = &["pkt", "pkts", "packets"];

fn unit_list(units: &[(&str, u64)]) -> String {
    units.iter().map(|(u, _)| *u).collect::<Vec<_>>().join(", ")
}

fn parse_with(s: &str, units: &[(&str, u64)], what: &str, example: &str, max: &str) -> Result<u64, String> {
    let bad = || format!("invalid {what} {s:?}: expected a number with a unit, like {example:?} (units: {})", unit_list(units));
    let (num, unit) = split_number(s).ok_or_else(bad)?;
    if unit.is_empty() {
        return Err(format!("invalid {what} {s:?}: the unit is missing; write it out, like {example:?} (units: {})", unit_list(units)));
    }
    let scale = units.iter().find(|(u, _)| *u == unit).map(|(_, k)| *k).ok_or_else(bad)?;
    scaled_integer(num, scale).map_err(|e| match e {
        NumError::Malformed => bad(),
        NumError::NotWhole => format!("invalid {what} {s:?}: not a whole number of {}", units[0].0),
        NumError::TooLarge => format!("invalid {what} {s:?}: too large (at most {max})"),
    })
}

pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let bps = parse_with(s, RATE_UNITS, "rate", "10Gbps", "2^64 bps")?;
    if bps == 0 {
        return Err(format!("invalid rate {s:?}: a rate must be greater than zero"));
    }
    Ok(Rate::from_bps(bps))
}

pub fn parse_dur(s: &str) -> Result<Dur, String> {
    parse_with(s, TIME_UNITS, "duration", "2us", "2^64 ps, about 213 days").map(Dur)
}

pub fn parse_bytes(s: &str) -> Result<u64, String> {
    parse_with(s, BYTE_UNITS, "size", "64KiB", "2^64 B")
}

/// A byte count written with a unit ("1448B", "64KiB").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Bytes(pub u64);

/// A queue capacity or threshold: packets or bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QSize {
    Packets(u64),
    Bytes(u64),
}

impl QSize {
    pub fn parse(s: &str) -> Result<QSize, String> {
        let bad = || {
            format!("invalid queue size {s:?}: expected a packet count like \"100pkt\" or a size like \"150KB\" (units: pkt, {})", unit_list(BYTE_UNITS))
        };
        let (num, unit) = split_number(s).ok_or_else(bad)?;
        if PACKET_UNITS.contains(&unit) {
            return scaled_integer(num, 1).map(QSize::Packets).map_err(|_| format!("invalid packet count {s:?}: expected a whole number, like \"100pkt\""));
        }
        if unit.is_empty() {
            return Err(format!("invalid queue size {s:?}: the unit is missing; write \"{num}pkt\" for packets or add a byte unit ({})", unit_list(BYTE_UNITS)));
        }
        if !BYTE_UNITS.iter().any(|(u, _)| *u == unit) {
            return Err(bad());
        }
        parse_bytes(s).map(QSize::Bytes)
    }
    pub fn is_zero(self) -> bool {
        matches!(self, QSize::Packets(0) | QSize::Bytes(0))
    }
}

/// A flow size: a byte count or "inf" for a long-lived flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowSize {
    Bytes(u64),
    Infinite,
}

impl FlowSize {
    pub fn parse(s: &str) -> Result<FlowSize, String> {
        if s.trim() == "inf" {
            return Ok(FlowSize::Infinite);
        }
        parse_bytes(s).map(FlowSize::Bytes).map_err(|e| format!("{e}; or \"inf\" for a long-lived flow"))
    }
}

// ---- canonical printing ---------------------------------------------------

fn fmt_scaled(v: u64, units: &[(&str, u64)], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    // Largest unit that divides exactly (units listed smallest first).
    let mut best = units[0];
    for &(u, k) in units {
        if k <= v && v.is_multiple_of(k) && k > best.1 {
            best = (u, k);
        }
    }
    write!(f, "{}{}", v / best.1, best.0)
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}
impl fmt::Display for QSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QSize::Packets(n) => write!(f, "{n}pkt"),
            QSize::Bytes(n) => write!(f, "{n}B"),
        }
    }
}
impl fmt::Display for FlowSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlowSize::Bytes(n) => write!(f, "{n}B"),
            FlowSize::Infinite => write!(f, "inf"),
        }
    }
}

/// Canonical text of a duration ("2us", "1500ps").
pub fn dur_string(d: Dur) -> String {
    struct D(u64);
    impl fmt::Display for D {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            fmt_scaled(self.0, &[("ps", 1), ("ns", 1_000), ("us", 1_000_000), ("ms", 1_000_000_000), ("s", 1_000_000_000_000)], f)
        }
    }
    D(d.0).to_string()
}

/// Canonical text of a rate ("10Gbps").
pub fn rate_string(r: Rate) -> String {
    struct R(u64);
    impl fmt::Display for R {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            fmt_scaled(self.0, &[("bps", 1), ("Kbps", 1_000), ("Mbps", 1_000_000), ("Gbps", 1_000_000_000), ("Tbps", 1_000_000_000_000)], f)
        }
    }
    R(r.bps).to_string()
}

// ---- serde -----------------------------------------------------------------

/// Deserialize from a string with `parse`; anything else is a type error that
/// says what a valid value looks like.
struct StrVisitor<T> {
    parse: fn(&str) -> Result<T, String>,
    expecting: &'static str,
}

impl<T> Visitor<'_> for StrVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Err(E::custom(format!("invalid value {v}: {} (the unit is missing)", self.expecting)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Err(E::custom(format!("invalid value {v}: {} (the unit is missing)", self.expecting)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Err(E::custom(format!("invalid value {v}: {} (the unit is missing)", self.expecting)))
    }
}

macro_rules! string_serde {
    ($ty:ty, $parse:expr, $print:expr, $expecting:literal) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(StrVisitor { parse: $parse, expecting: $expecting })
            }
        }
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let print: fn(&$ty) -> String = $print;
                s.serialize_str(&print(self))
            }
        }
    };
}

/// Serde wrappers for engine types (orphan rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RateV(pub Rate);
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct DurV(pub Dur);

string_serde!(RateV, |s| parse_rate(s).map(RateV), |r| rate_string(r.0), "a rate with a unit, like \"10Gbps\" (units: bps, Kbps, Mbps, Gbps, Tbps)");
string_serde!(DurV, |s| parse_dur(s).map(DurV), |d| dur_string(d.0), "a duration with a unit, like \"2us\" (units: ps, ns, us, ms, s)");
string_serde!(Bytes, |s| parse_bytes(s).map(Bytes), |b| b.to_string(), "a size with a unit, like \"64KiB\" (units: B, KB, KiB, MB, MiB, GB, GiB)");
string_serde!(QSize, QSize::parse, |q| q.to_string(), "a queue size in packets or bytes, like \"100pkt\" or \"150KB\"");
string_serde!(FlowSize, FlowSize::parse, |q| q.to_string(), "a flow size with a unit, like \"64KB\", or \"inf\"");
string_serde!(Clock, Clock::parse, |c| c.to_string(), "a clock resolution, like \"1ns\", or \"sbintime\"");

string_serde!(Xoff, Xoff::parse, |x| x.to_string(), "a size with a unit, like \"40KB\", or \"dynamic\"");
string_serde!(Headroom, Headroom::parse, |h| h.to_string(), "a size with a unit, like \"30KB\", or \"auto\"");

/// PFC's XOFF level: a fixed size, or "dynamic" (a share of the free shared buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Xoff {
    Bytes(u64),
    Dynamic,
}

impl Xoff {
    fn parse(s: &str) -> Result<Xoff, String> {
        if s == "dynamic" {
            return Ok(Xoff::Dynamic);
        }
        parse_bytes(s).map(Xoff::Bytes).map_err(|e| format!("{e}, or \"dynamic\""))
    }
}

impl fmt::Display for Xoff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Xoff::Bytes(b) => write!(f, "{b}B"),
            Xoff::Dynamic => f.write_str("dynamic"),
        }
    }
}

/// PFC's headroom: a fixed size, or "auto" (derived from each link).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Headroom {
    Bytes(u64),
    #[default]
    Auto,
}

impl Headroom {
    fn parse(s: &str) -> Result<Headroom, String> {
        if s == "auto" {
            return Ok(Headroom::Auto);
        }
        parse_bytes(s).map(Headroom::Bytes).map_err(|e| format!("{e}, or \"auto\""))
    }
}

impl fmt::Display for Headroom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Headroom::Bytes(b) => write!(f, "{b}B"),
            Headroom::Auto => f.write_str("auto"),
        }
    }
}

/// A clock that ticks every `num / den` picoseconds: a whole number of
/// picoseconds, or FreeBSD's sbintime (32.32 fixed-point seconds, a tick of
/// 2^-32 s ≈ 232.8 ps), in which seed 004's ARREAR stores its clock reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    num: u64,
    den: u64,
}

impl Clock {
    pub const SBINTIME: Clock = Clock { num: 1_000_000_000_000, den: 1 << 32 };

    pub fn every(period: Dur) -> Clock {
        Clock { num: period.ps(), den: 1 }
    }
    fn parse(s: &str) -> Result<Clock, String> {
        if s == "sbintime" {
            return Ok(Clock::SBINTIME);
        }
        parse_dur(s).map(Clock::every).map_err(|e| format!("{e}, or \"sbintime\" (2^-32 s)"))
    }
    /// Ticks since time zero at `ps` picoseconds.
    #[inline]
    pub fn ticks(&self, ps: u64) -> u64 {
        (ps as u128 * self.den as u128 / self.num as u128) as u64
    }
    /// The length of `ticks` ticks, rounded down to the picosecond.
    #[inline]
    pub fn span(&self, ticks: u64) -> Dur {
        Dur((ticks as u128 * self.num as u128 / self.den as u128) as u64)
    }
    /// One tick, rounded up to the picosecond (the RTO's granularity term).
    pub fn resolution(&self) -> Dur {
        Dur(self.num.div_ceil(self.den))
    }
}

impl fmt::Display for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Clock::SBINTIME {
            f.write_str("sbintime")
        } else {
            f.write_str(&dur_string(self.span(1)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rates_times_sizes() {
        assert_eq!(parse_rate("10Gbps").unwrap().bps, 10_000_000_000);
        assert_eq!(parse_rate("2.5Gbps").unwrap().bps, 2_500_000_000);
        assert_eq!(parse_rate("50Mbps").unwrap().bps, 50_000_000);
        assert_eq!(parse_dur("2us").unwrap(), Dur::from_us(2));
        assert_eq!(parse_dur("134ns").unwrap(), Dur::from_ns(134));
        assert_eq!(parse_dur("0.5s").unwrap(), Dur::from_ms(500));
        assert!(parse_dur("1.5ps").is_err());
        assert_eq!(parse_bytes("64KiB").unwrap(), 65536);
        assert_eq!(parse_bytes("1.5KB").unwrap(), 1500);
        assert_eq!(QSize::parse("100pkt").unwrap(), QSize::Packets(100));
        assert_eq!(QSize::parse("150KB").unwrap(), QSize::Bytes(150_000));
        assert_eq!(FlowSize::parse("inf").unwrap(), FlowSize::Infinite);
    }

    #[test]
    fn sbintime_ticks_every_2_to_the_minus_32_seconds() {
        let c = Clock::parse("sbintime").unwrap();
        assert_eq!(c.ticks(1_000_000_000_000), 1 << 32);
        assert_eq!(c.resolution(), Dur(233));
        assert_eq!(c.span(1 << 32), Dur(1_000_000_000_000));
        assert_eq!(c.span(4295), Dur(1_000_007)); // 4295 x 232.83 ps, floored
        assert_eq!(c.to_string(), "sbintime");
        let ns = Clock::parse("1ns").unwrap();
        assert_eq!((ns.ticks(2_999), ns.span(3), ns.resolution()), (2, Dur(3000), Dur(1000)));
        assert!(Clock::parse("1.5ps").is_err());
    }

    #[test]
    fn rejects_missing_or_unknown_units_with_a_helpful_message() {
        assert!(parse_dur("300000000s").unwrap_err().contains("too large"));
        assert!(parse_dur("1.5ps").unwrap_err().contains("not a whole number of ps"));
        let e = parse_rate("10").unwrap_err();
        assert!(e.contains("unit is missing") && e.contains("Gbps"), "{e}");
        let e = parse_rate("10Gbit").unwrap_err();
        assert!(e.contains("10Gbit") && e.contains("units:"), "{e}");
        assert!(parse_rate("0Gbps").unwrap_err().contains("greater than zero"));
        assert!(parse_dur("-1us").is_err());
        assert!(parse_dur("").is_err());
        assert!(parse_bytes("99999999999999999999GB").is_err());
    }

    #[test]
    fn canonical_strings_round_trip() {
        for s in ["10Gbps", "2500Mbps", "1bps"] {
            let r = parse_rate(s).unwrap();
            assert_eq!(parse_rate(&rate_string(r)).unwrap(), r);
        }
        assert_eq!(rate_string(parse_rate("2.5Gbps").unwrap()), "2500Mbps");
        assert_eq!(dur_string(parse_dur("1.5us").unwrap()), "1500ns");
        assert_eq!(dur_string(Dur::ZERO), "0ps");
    }
}
