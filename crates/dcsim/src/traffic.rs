//! Flow-size distributions and open-loop (Poisson) flow arrivals.
//!
//! A size distribution is an empirical CDF given as points (bytes, P[size <=
//! bytes]). Sampling draws u ~ U(0, 1), finds the first point with
//! cdf >= u and interpolates linearly from the point before (from (0, 0)
//! before the first), as ns3-ecn-sharp's `gen_random_cdf` and HPCC's
//! `CustomRand` do; the size is rounded up to whole bytes (at least 1).
//! The mean used for load is the mean of that piecewise-linear CDF.

use crate::config::{Pattern, Poisson};
pub use dcsim_engine::Rng;
use dcsim_engine::{Dur, SimTime};

#[derive(Clone, Debug)]
pub struct SizeDist {
    xs: Vec<f64>,
    ps: Vec<f64>,
}

impl SizeDist {
    /// Points must be validated (non-decreasing, cdf in [0, 1], ending at 1).
    pub fn new(points: &[[f64; 2]]) -> SizeDist {
        let mut xs = vec![0.0];
        let mut ps = vec![0.0];
        for &[x, p] in points {
            xs.push(x);
            ps.push(p);
        }
        SizeDist { xs, ps }
    }

    /// Atoms `(bytes, weight)`: each size with probability weight / total.
    pub fn discrete(atoms: &[(u64, f64)]) -> SizeDist {
        let total: f64 = atoms.iter().map(|a| a.1).sum();
        let (mut xs, mut ps, mut acc) = (Vec::new(), Vec::new(), 0.0);
        for &(b, w) in atoms {
            // A zero-width segment jumps to the atom, which then takes its mass.
            xs.push(b as f64);
            ps.push(acc);
            acc += w / total;
            xs.push(b as f64);
            ps.push(acc);
        }
        *ps.last_mut().unwrap() = 1.0;
        SizeDist { xs, ps }
    }

    pub fn fixed(bytes: u64) -> SizeDist {
        SizeDist { xs: vec![bytes as f64, bytes as f64], ps: vec![0.0, 1.0] }
    }

    pub fn sample(&self, rng: &mut Rng) -> u64 {
        self.quantile(rng.next_f64())
    }

    /// The size at probability `u` (inverse of the linear CDF, rounded up).
    pub fn quantile(&self, u: f64) -> u64 {
        let i = self.ps.partition_point(|&p| p < u).clamp(1, self.ps.len() - 1);
        let (x0, x1, p0, p1) = (self.xs[i - 1], self.xs[i], self.ps[i - 1], self.ps[i]);
        let x = if p1 > p0 { x0 + (x1 - x0) * (u - p0) / (p1 - p0) } else { x1 };
        (x.ceil() as u64).max(1)
    }

    /// Mean of the piecewise-linear CDF (trapezoid rule).
    pub fn mean(&self) -> f64 {
        self.xs.windows(2).zip(self.ps.windows(2)).map(|(x, p)| (p[1] - p[0]) * (x[0] + x[1]) / 2.0).sum()
    }
}

/// Exponential inter-arrival time with rate `lambda` per second, in seconds.
pub fn exp_interval(rng: &mut Rng, lambda: f64) -> f64 {
    let u = rng.next_f64();
    -(1.0 - u).ln() / lambda
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.next_f64();
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A Gamma(shape, scale) draw: Marsaglia and Tsang (ACM TOMS 2000), with the
/// U^(1/shape) boost for shape < 1.
pub fn gamma(rng: &mut Rng, shape: f64, scale: f64) -> f64 {
    if shape < 1.0 {
        let u = 1.0 - rng.next_f64();
        return gamma(rng, shape + 1.0, scale) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = 1.0 - rng.next_f64();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v * scale;
        }
    }
}

/// A service time draw.
pub fn service_time(rng: &mut Rng, t: &crate::config::ServiceTime) -> Dur {
    use crate::config::ServiceTime;
    let secs = match t {
        ServiceTime::Constant(c) => return c.value.0,
        ServiceTime::Exponential(e) => exp_interval(rng, 1.0 / e.mean.0.as_secs_f64()),
        ServiceTime::Gamma(g) => g.unit.0.as_secs_f64() * gamma(rng, g.shape, g.scale) + g.offset.0.as_secs_f64(),
    };
    Dur((secs * 1e12).round() as u64)
}

/// Open-loop Poisson flow arrivals for one workload. Each source host has
/// its own arrival chain at rate lambda = load * C_ref / (8 * mean size)
/// flows per second (all_to_one splits the target's rate over the sources);
/// see docs/models/workloads.md.
pub struct PoissonGen {
    pub workload: u32,
    dist: SizeDist,
    pattern: Pattern,
    members: Vec<u32>,
    /// Per source: host and arrival rate (flows per second).
    pub sources: Vec<(u32, f64)>,
    target: u32,
    /// Rack of every host, when only other racks may be destinations.
    racks: Option<Vec<u32>>,
    /// Permutation pattern: index of each member's fixed destination.
    perm: Vec<u32>,
    pub stop: SimTime,
    /// Arrival chains that have not yet passed `stop`.
    pub chains_alive: u32,
    /// Flows reuse idle connections of their host pair.
    pub persistent: bool,
    pub dscp: u8,
    rng: Rng,
}

/// One new flow, and when its source's next flow arrives (None: past stop).
pub struct Arrival {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub next: Option<SimTime>,
}

impl PoissonGen {
    /// `ref_rate(h)`: the reference capacity of host h in bits/s; `racks`:
    /// the rack of every host.
    pub fn new(workload: u32, p: &Poisson, num_hosts: u32, ref_rate: impl Fn(u32) -> f64, racks: Vec<u32>, stop: SimTime, mut rng: Rng) -> PoissonGen {
        let members: Vec<u32> = p.hosts.as_ref().map(|h| h.0.clone()).unwrap_or_else(|| (0..num_hosts).collect());
        let dist = p.size.dist();
        let per_bit = 1.0 / (8.0 * dist.mean());
        let target = p.target.unwrap_or(0);
        let sources: Vec<(u32, f64)> = match p.pattern {
            Pattern::AllToAll | Pattern::Permutation => members.iter().map(|&h| (h, p.load * ref_rate(h) * per_bit)).collect(),
            Pattern::AllToOne => {
                let each = p.load * ref_rate(target) * per_bit / (members.len() - 1) as f64;
                members.iter().filter(|&&h| h != target).map(|&h| (h, each)).collect()
            }
            Pattern::OneToAll => vec![(target, p.load * ref_rate(target) * per_bit)],
        };
        // Sattolo's shuffle: a random cyclic permutation, so nobody sends to itself.
        let mut perm: Vec<u32> = (0..members.len() as u32).collect();
        if p.pattern == Pattern::Permutation {
            for i in (1..perm.len()).rev() {
                let j = rng.below(i as u64) as usize;
                perm.swap(i, j);
            }
        }
        PoissonGen {
            workload,
            dist,
            pattern: p.pattern,
            members,
            sources,
            target,
            racks: p.other_racks_only.then_some(racks),
            perm,
            persistent: p.connections == crate::config::Connections::Persistent,
            dscp: p.dscp,
            stop,
            chains_alive: 0,
            rng,
        }
    }

    fn after(&mut self, now: SimTime, lambda: f64) -> Option<SimTime> {
        let at = now + Dur((exp_interval(&mut self.rng, lambda) * 1e12) as u64);
        (at < self.stop).then_some(at)
    }

    /// The first arrival of every source chain that starts before `stop`.
    pub fn first_arrivals(&mut self, start: SimTime) -> Vec<(SimTime, u32)> {
        let mut first = Vec::new();
        for i in 0..self.sources.len() {
            if let Some(at) = self.after(start, self.sources[i].1) {
                first.push((at, i as u32));
            }
        }
        self.chains_alive = first.len() as u32;
        first
    }

    /// Source `source` starts a flow at `now`.
    pub fn arrive(&mut self, source: u32, now: SimTime) -> Arrival {
        let (src, lambda) = self.sources[source as usize];
        let n = self.members.len() as u64;
        let dst = match self.pattern {
            Pattern::AllToOne => self.target,
            // Permutation sources are the members in order.
            Pattern::Permutation => self.members[self.perm[source as usize] as usize],
            Pattern::AllToAll | Pattern::OneToAll => loop {
                let d = self.members[self.rng.below(n) as usize];
                let other_rack = self.racks.as_ref().is_none_or(|r| r[d as usize] != r[src as usize]);
                if d != src && other_rack {
                    break d;
                }
            },
        };
        let bytes = self.dist.sample(&mut self.rng);
        let next = self.after(now, lambda);
        if next.is_none() {
            self.chains_alive -= 1;
        }
        Arrival { src, dst, bytes, next }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CdfSpec, LoadReference, SizeSpec};
    use dcsim_engine::StreamId;

    /// Web search (DCTCP paper) as shipped in data/workloads.
    const WEBSEARCH: [[f64; 2]; 12] = [
        [0.0, 0.0], [10000.0, 0.15], [20000.0, 0.2], [30000.0, 0.3], [50000.0, 0.4], [80000.0, 0.53],
        [200000.0, 0.6], [1000000.0, 0.7], [2000000.0, 0.8], [5000000.0, 0.9], [10000000.0, 0.97], [30000000.0, 1.0],
    ];

    fn poisson(pattern: Pattern, target: Option<u32>, other_racks_only: bool) -> Poisson {
        Poisson {
            size: SizeSpec::Cdf(CdfSpec { cdf: None, cdf_file: None, packet_bytes: None, points: WEBSEARCH.to_vec() }),
            load: 0.5,
            load_reference: LoadReference::Host,
            pattern,
            hosts: None,
            target,
            other_racks_only,
            start: Default::default(),
            stop: None,
            connections: Default::default(),
            dscp: 0,
        }
    }

    #[test]
    fn generated_load_is_within_two_percent_of_the_target() {
        // 16 hosts at 10 Gb/s, 50% load, web search sizes, 200 simulated
        // seconds of arrivals (~1.2 M flows): offered bits / (load * C * T * hosts).
        for pattern in [Pattern::AllToAll, Pattern::Permutation, Pattern::AllToOne, Pattern::OneToAll] {
            let target = matches!(pattern, Pattern::AllToOne | Pattern::OneToAll).then_some(3);
            let p = poisson(pattern, target, false);
            let stop = SimTime(Dur::from_secs(200).ps());
            let racks = (0..16).map(|h| h / 4).collect();
            let mut g = PoissonGen::new(0, &p, 16, |_| 10e9, racks, stop, Rng::stream(7, StreamId { kind: 5, index: 0 }));
            let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<(SimTime, u32)>> =
                g.first_arrivals(SimTime::ZERO).into_iter().map(std::cmp::Reverse).collect();
            let mut bits = 0.0;
            let mut per_dst = [0u64; 16];
            while let Some(std::cmp::Reverse((t, s))) = heap.pop() {
                let a = g.arrive(s, t);
                assert_ne!(a.src, a.dst, "a flow to itself");
                bits += a.bytes as f64 * 8.0;
                per_dst[a.dst as usize] += 1;
                if let Some(n) = a.next {
                    heap.push(std::cmp::Reverse((n, s)));
                }
            }
            assert_eq!(g.chains_alive, 0);
            let capacity_hosts = if matches!(pattern, Pattern::AllToAll | Pattern::Permutation) { 16.0 } else { 1.0 };
            let target_bits = 0.5 * 10e9 * 200.0 * capacity_hosts;
            let err = (bits - target_bits).abs() / target_bits;
            assert!(err < 0.02, "{pattern:?}: offered {:.4e} bits vs target {target_bits:.4e} ({:.2}%)", bits, err * 100.0);
            if pattern == Pattern::AllToOne {
                assert_eq!(per_dst.iter().filter(|&&c| c > 0).count(), 1);
            }
        }
    }

    #[test]
    fn gamma_service_times_have_the_seed_000_mean() {
        // 180 ns * Gamma(0.7, 20000) + 10 us: mean 180e-9 * 14000 + 10e-6 = 2.53 ms.
        let t: crate::config::ServiceTime = serde_json::from_str(r#"{"type": "gamma", "shape": 0.7, "scale": 20000, "unit": "180ns", "offset": "10us"}"#).unwrap();
        assert!((t.mean_seconds() - 2.53e-3).abs() < 1e-12);
        let mut rng = Rng::from_seed_u64(5);
        let n = 200_000;
        let draws: Vec<f64> = (0..n).map(|_| service_time(&mut rng, &t).as_secs_f64()).collect();
        let mean = draws.iter().sum::<f64>() / n as f64;
        assert!((mean - 2.53e-3).abs() / 2.53e-3 < 0.01, "{mean}");
        // Gamma(0.7) variance k*theta^2: sd of the service time = 180 ns * sqrt(0.7) * 20000.
        let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        let sd = 180e-9 * 0.7f64.sqrt() * 20000.0;
        assert!((var.sqrt() - sd).abs() / sd < 0.02, "{} vs {sd}", var.sqrt());
        assert!(draws.iter().all(|&x| x >= 10e-6));
    }

    #[test]
    fn other_racks_only_never_picks_the_own_rack() {
        let p = poisson(Pattern::AllToAll, None, true);
        let racks: Vec<u32> = (0..16).map(|h| h / 4).collect();
        let mut g = PoissonGen::new(0, &p, 16, |_| 10e9, racks.clone(), SimTime(Dur::from_secs(1).ps()), Rng::from_seed_u64(3));
        for i in 0..10_000u64 {
            let a = g.arrive((i % 16) as u32, SimTime::ZERO);
            assert_ne!(racks[a.src as usize], racks[a.dst as usize]);
        }
    }

    #[test]
    fn samples_follow_the_linear_cdf() {
        let d = SizeDist::new(&[[100.0, 0.5], [300.0, 1.0]]);
        // Mean: half uniform on (0, 100], half on (100, 300]: 25 + 100 = 125.
        assert!((d.mean() - 125.0).abs() < 1e-9);
        let mut rng = Rng::stream(1, StreamId { kind: 0, index: 0 });
        let n = 200_000;
        let mean = (0..n).map(|_| d.sample(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!((mean - 125.5).abs() < 1.0, "{mean}"); // +0.5 from rounding up
        assert_eq!(SizeDist::fixed(1500).sample(&mut rng), 1500);
        // Seed 000's dynamic mix: 900 B and 10 MB, 4 to 1 by count.
        let mix = SizeDist::discrete(&[(900, 4.0), (10_000_000, 1.0)]);
        assert!((mix.mean() - (0.8 * 900.0 + 0.2 * 1e7)).abs() < 1e-6);
        let draws: Vec<u64> = (0..10_000).map(|_| mix.sample(&mut rng)).collect();
        assert!(draws.iter().all(|&b| b == 900 || b == 10_000_000));
        let small = draws.iter().filter(|&&b| b == 900).count();
        assert!((7800..=8200).contains(&small), "{small}");
        assert_eq!(SizeDist::fixed(1500).mean(), 1500.0);
    }
}
