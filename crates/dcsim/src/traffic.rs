//! Flow-size distributions and open-loop (Poisson) flow arrivals.
//!
//! A size distribution is an empirical CDF given as points (bytes, P[size <=
//! bytes]). Sampling draws u ~ U(0, 1), finds the first point with
//! cdf >= u and interpolates linearly from the point before (from (0, 0)
//! before the first), as ns3-ecn-sharp's `gen_random_cdf` and HPCC's
//! `CustomRand` do; the size is rounded up to whole bytes (at least 1).
//! The mean used for load is the mean of that piecewise-linear CDF.

use dcsim_engine::Rng;

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

    pub fn fixed(bytes: u64) -> SizeDist {
        SizeDist { xs: vec![bytes as f64, bytes as f64], ps: vec![0.0, 1.0] }
    }

    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let u = rng.next_f64();
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

#[cfg(test)]
mod tests {
    use super::*;
    use dcsim_engine::StreamId;

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
        assert_eq!(SizeDist::fixed(1500).mean(), 1500.0);
    }
}
