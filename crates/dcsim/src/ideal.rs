//! Ideal flow completion times: the time a transfer takes on an empty network
//! along the same path, if the sender were never window-limited.
//!
//! Frames leave the source back to back and cross store-and-forward hops. For
//! hop i with serialisation time t_i (per frame, rounded up to the picosecond
//! exactly as the simulator does) and latency l_i after it (propagation, plus
//! the switch forwarding latency when the next node is a switch), the
//! departure of frame j from hop i is
//!
//!   D(j, i) = max(D(j, i-1) + l_{i-1}, D(j-1, i)) + t_i,
//!
//! and for a batch of c identical frames this unrolls (max-plus) to
//!
//!   D(c, i) = max over k <= i of [ D(1, k) + (c-1) t_k + sum_{m=k+1..i} (l_{m-1} + t_m) ].
//!
//! The transfer ends when the last frame's last bit reaches the destination:
//! D(last, h) + l_h. A flow on a new connection adds the handshake: the SYN
//! crosses the path, the SYN-ACK crosses back, then the client's pure ACK
//! leaves first, followed by the data (this is what dcsim's TCP does). An
//! incast response adds the query's transfer from querier to responder.
//! ideal_fct = that total; slowdown = fct / ideal_fct.

use crate::config::Scenario;
use crate::packet::{flags, Packet, WScale};
use crate::tcp::TcpParams;
use crate::topology::{Network, NodeKind};
use dcsim_engine::{Dur, Rate};

pub struct IdealModel<'a> {
    net: &'a Network,
    preamble: bool,
    tcp: &'a TcpParams,
}

impl<'a> IdealModel<'a> {
    pub fn new(s: &Scenario, net: &'a Network, tcp: &'a TcpParams) -> IdealModel<'a> {
        IdealModel { net, preamble: s.link.framing.preamble(), tcp }
    }

    /// Hops from src to dst as (rate, latency, inter-frame gap); `extra`
    /// delays the frames before the first hop.
    fn hops(&self, src: u32, dst: u32, hash: u32, extra: Dur) -> Option<Vec<(Rate, Dur, Dur)>> {
        let mut hops: Vec<(Rate, Dur, Dur)> = self
            .net
            .path(src, dst, hash)?
            .into_iter()
            .map(|p| {
                let port = &self.net.ports[p as usize];
                let lat = if self.net.kinds[port.peer as usize] == NodeKind::Switch {
                    port.delay + self.net.fwd_latency[(port.peer - self.net.num_hosts) as usize]
                } else {
                    port.delay
                };
                (port.rate, lat, port.gap)
            })
            .collect();
        // A constant delay before the source's NIC shifts every frame alike,
        // which equals adding it to the last hop's latency.
        if let Some(last) = hops.last_mut() {
            last.1 += extra;
        }
        Some(hops)
    }

    fn frame(&self, mut p: Packet) -> u64 {
        p.has_ts = self.tcp.timestamps;
        p.finalize_size(self.preamble);
        p.wire_bytes as u64
    }

    pub fn syn_frame(&self) -> u64 {
        self.frame(Packet {
            flags: flags::SYN,
            syn_sack_perm: self.tcp.sack,
            syn_wscale: WScale::new(self.tcp.window_scale.then(|| self.tcp.own_wscale())),
            ..Default::default()
        })
    }

    pub fn ack_frame(&self) -> u64 {
        self.frame(Packet { flags: flags::ACK, ..Default::default() })
    }

    /// The data frames carrying `bytes`: (frame size, count) batches.
    pub fn data_frames(&self, bytes: u64) -> Vec<(u64, u64)> {
        let mss = self.tcp.payload_mss(self.tcp.timestamps) as u64;
        let full = bytes / mss;
        let rest = bytes % mss;
        let mut v = Vec::new();
        if full > 0 {
            v.push((self.frame(Packet { flags: flags::ACK, payload: mss as u32, ..Default::default() }), full));
        }
        if rest > 0 {
            v.push((self.frame(Packet { flags: flags::ACK, payload: rest as u32, ..Default::default() }), 1));
        }
        v
    }

    /// Time from the first frame's first bit leaving the source to the last
    /// frame's last bit reaching the destination.
    pub fn pipeline(hops: &[(Rate, Dur, Dur)], batches: &[(u64, u64)]) -> Dur {
        let h = hops.len();
        let mut prev = vec![0u64; h]; // departure of the previous frame per hop
        let mut first = vec![0u64; h];
        for &(size, count) in batches {
            if count == 0 {
                continue;
            }
            let t: Vec<u64> = hops.iter().map(|(r, _, _)| r.tx_time(size).ps()).collect();
            // A frame may start a gap after the one before it (none yet: 0).
            let ready = |i: usize, prev: &[u64]| if prev[i] == 0 { 0 } else { prev[i] + hops[i].2.ps() };
            // First frame of the batch.
            let mut arrive = prev[0];
            for (i, f) in first.iter_mut().enumerate() {
                *f = arrive.max(ready(i, &prev)) + t[i];
                arrive = *f + hops[i].1.ps();
            }
            // Last frame of the batch (max-plus closed form).
            for (i, last) in prev.iter_mut().enumerate() {
                let mut best = 0u64;
                for k in 0..=i {
                    let mut v = first[k] + (count - 1) * (t[k] + hops[k].2.ps());
                    for m in k + 1..=i {
                        v += hops[m - 1].1.ps() + t[m];
                    }
                    best = best.max(v);
                }
                *last = best;
            }
        }
        Dur(prev[h - 1] + hops[h - 1].1.ps())
    }

    /// Ideal completion time of a flow of `bytes` from src to dst; `extra` is
    /// the RTT-variation delay of the frames src and dst send.
    /// None when there is no route (failed links at the end of the run).
    #[allow(clippy::too_many_arguments)] // the flow's description, read in one place
    pub fn flow(&self, src: u32, dst: u32, hash: u32, bytes: u64, new_connection: bool, query: Option<u64>, extra: (Dur, Dur)) -> Option<Dur> {
        let fwd = self.hops(src, dst, hash, extra.0)?;
        let rev = self.hops(dst, src, hash, extra.1)?;
        let mut total = Dur::ZERO;
        let mut batches = Vec::new();
        if new_connection {
            // Handshake: SYN there, SYN-ACK back; then the client's ACK leads the data.
            let syn = self.syn_frame();
            total += Self::pipeline(&fwd, &[(syn, 1)]) + Self::pipeline(&rev, &[(syn, 1)]);
            batches.push((self.ack_frame(), 1));
        }
        if let Some(q) = query {
            total += Self::pipeline(&rev, &self.data_frames(q));
        }
        batches.extend(self.data_frames(bytes));
        Some(total + Self::pipeline(&fwd, &batches))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipeline_matches_hand_computation() {
        let g10 = Rate::from_gbps(10);
        let g1 = Rate::from_gbps(1);
        // Two hops, 1 us each; 3 frames of 1500 B: 1.2 us at 10G, 12 us at 1G.
        let hops = [(g10, Dur::from_us(1), Dur::ZERO), (g1, Dur::from_us(1), Dur::ZERO)];
        // first frame: 1.2 + 1 + 12 + 1; then two more spaced by the 12 us bottleneck.
        let t = IdealModel::pipeline(&hops, &[(1500, 3)]);
        assert_eq!(t, Dur::from_ns(1200 + 1000 + 12000 + 1000 + 2 * 12000));
        // Bottleneck first: frames then arrive spaced by 12 us as well.
        let hops = [(g1, Dur::from_us(1), Dur::ZERO), (g10, Dur::from_us(1), Dur::ZERO)];
        assert_eq!(IdealModel::pipeline(&hops, &[(1500, 3)]), Dur::from_ns(3 * 12000 + 1000 + 1200 + 1000));
        // A small frame first, then big ones.
        let hops = [(g10, Dur::ZERO, Dur::ZERO), (g10, Dur::ZERO, Dur::ZERO)];
        assert_eq!(IdealModel::pipeline(&hops, &[(100, 1), (1000, 2)]), Dur::from_ns(80 + 800 + 800 + 800));
        // With a 12 B (9.6 ns) inter-frame gap: the first frame is not
        // delayed, each later one starts 9.6 ns after the one before.
        let gap = Dur(9600);
        let hops = [(g10, Dur::ZERO, gap), (g10, Dur::ZERO, gap)];
        assert_eq!(IdealModel::pipeline(&hops, &[(100, 1), (1000, 2)]).ps(), 80_000 + 800_000 + 2 * (9600 + 800_000));
    }
}
