//! Open-loop Poisson flows at a target load (the generator is traffic::PoissonGen).

use super::*;

impl World<'_> {
    /// The reference capacity of `host` for a load figure, in bits/s.
    pub(super) fn reference_rate(&self, host: u32, reference: LoadReference) -> f64 {
        let nic = self.net.ports[self.net.nic(host) as usize].rate.bps as f64;
        match (reference, &self.scenario.topology) {
            (LoadReference::UplinkShare, Topology::Leafspine(t)) => {
                (t.spines as f64 * t.links_per_pair as f64 * t.uplink().bps as f64 / t.hosts_per_leaf as f64).min(nic)
            }
            _ => nic,
        }
    }

    pub(super) fn install_poisson(&mut self, workload: u32, p: &Poisson) {
        let app = self.poisson.len() as u32;
        let rng = Rng::stream(self.scenario.run.seed, StreamId { kind: streams::POISSON, index: app as u64 });
        let stop = SimTime::ZERO + p.stop.or(self.scenario.run.duration).map(|d| d.0).unwrap_or(Dur::ZERO);
        let racks = (0..self.net.num_hosts).map(|h| self.scenario.topology.rack_of(h)).collect();
        let mut g = PoissonGen::new(workload, p, self.net.num_hosts, |h| self.reference_rate(h, p.load_reference), racks, stop, rng);
        let first = g.first_arrivals(SimTime::ZERO + p.start.0);
        if !first.is_empty() {
            self.unfinished += 1;
        }
        for (at, source) in first {
            self.q.schedule(at, Ev::PoissonArrival { app, source });
        }
        self.poisson.push(g);
    }

    pub(super) fn poisson_arrival(&mut self, now: SimTime, app: u32, source: u32) {
        let g = &mut self.poisson[app as usize];
        let a = g.arrive(source, now);
        let (workload, done) = (g.workload, g.chains_alive == 0 && a.next.is_none());
        let (persistent, dscp) = (g.persistent, g.dscp);
        let f = self.add_flow_record(workload, a.src, a.dst, FlowSize::Bytes(a.bytes), now, dscp);
        self.start_flow_on(now, f, persistent);
        match a.next {
            Some(at) => self.q.schedule(at, Ev::PoissonArrival { app, source }),
            None if done => self.work_done(),
            None => {}
        }
    }
}
