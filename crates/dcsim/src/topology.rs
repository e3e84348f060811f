//! Building the network from the scenario: hosts, switches, full-duplex links
//! (one egress [`Port`] per direction) and shortest-path forwarding tables.

use crate::aqm::Aqm;
use crate::config::{Dumbbell, FatTree, FullBuffer, LeafSpine, NicBuffer, Routing, RttVariation, Scenario, Scheduler, Star, Topology};
use crate::hscc::Hscc;
use crate::phantom::PhantomQueue;
use crate::sched::Classes;
use crate::units::QSize;
use crate::port::{Capacity, Port, SharedBuffer};
use dcsim_engine::{Dur, Rate, Rng, StreamId};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

/// Random stream kinds (see [`dcsim_engine::rng`]).
pub mod streams {
    pub const AQM: u32 = 1;
    pub const TCP_ISN: u32 = 2;
    pub const FLOW_HASH: u32 = 3;
    pub const LINK_LOSS: u32 = 4;
    pub const POISSON: u32 = 5;
    pub const RTT_VARIATION: u32 = 6;
    pub const SEARCH: u32 = 7;
    pub const REQUESTS: u32 = 8;
    pub const PACER: u32 = 9;
    pub const CLASS_AQM: u32 = 10;
    pub const NDP_TRIM: u32 = 11;
    pub const NDP_PATHS: u32 = 12;
    pub const HOMA_PATHS: u32 = 13;
    pub const BULK_START: u32 = 14;
}

/// Up to this many (switch, host) forwarding entries are kept as a plain
/// table (512 KB); beyond, rows are run-length coded (`Network::fib_runs`).
const DENSE_FIB_ENTRIES: usize = 1 << 16;

pub struct Network {
    /// Hosts are nodes 0..num_hosts; switches follow.
    pub num_hosts: u32,
    pub kinds: Vec<NodeKind>,
    /// A readable name per node ("host3", "leaf0", "spine2", "edge1.0", ...).
    pub names: Vec<String>,
    /// Per switch (index node - num_hosts): its forwarding latency.
    pub fwd_latency: Vec<Dur>,
    pub routing: Routing,
    /// Shared buffers (one per switch when configured), indexed by Port::shared.
    pub shared: Vec<SharedBuffer>,
    /// Per switch: next choice for per-packet spraying.
    spray_next: Vec<u32>,
    pub ports: Vec<Port>,
    /// For each node, the ports it owns.
    pub node_ports: Vec<Vec<u32>>,
    /// Forwarding: for switch s (index s - num_hosts) and destination host h,
    /// a range (start, count) of `fib_ports`, the equal-cost next-hop ports.
    /// Small networks keep one entry per (switch, host) in `fib_dense`. Large
    /// ones would not fit in cache that way (k = 16 fat-tree: 2.6 MB): there
    /// each switch's row is run-length coded over destinations, since hosts
    /// under one subtree are numbered together (a few dozen runs per switch):
    /// switch s owns `fib_runs[fib_at[s]..fib_at[s + 1]]`, runs of (first
    /// destination, start, count).
    fib_dense: Vec<(u32, u32)>,
    fib_runs: Vec<(u32, u32, u32)>,
    fib_at: Vec<u32>,
    fib_ports: Vec<u32>,
}

struct Builder<'a> {
    scenario: &'a Scenario,
    switch_names: Vec<String>,
    net: Network,
}

impl<'a> Builder<'a> {
    /// The next switch, named by `Topology::switch_names`, with `latency`
    /// (None: the scenario's switch.forwarding_latency).
    fn add_switch(&mut self, latency: Option<Dur>) -> u32 {
        let name = self.switch_names[self.net.kinds.len() - self.net.num_hosts as usize].clone();
        self.net.kinds.push(NodeKind::Switch);
        self.net.names.push(name);
        self.net.node_ports.push(Vec::new());
        self.net.fwd_latency.push(latency.unwrap_or(self.scenario.switch.forwarding_latency.0));
        self.net.spray_next.push(0);
        if let Some(sb) = self.scenario.switch.shared_buffer {
            self.net.shared.push(SharedBuffer { size: sb.size.0, alpha: sb.alpha, used: 0 });
        }
        self.net.kinds.len() as u32 - 1
    }

    fn port_for(&mut self, node: u32, peer: u32, rate: Rate, delay: Dur) -> u32 {
        let id = self.net.ports.len() as u32;
        let s = self.scenario;
        let (capacity, aqm) = match self.net.kinds[node as usize] {
            NodeKind::Host => {
                let cap = match s.host.nic_buffer {
                    NicBuffer::Unlimited => Capacity::Unlimited,
                    NicBuffer::Limited(q) => Capacity::Limited(q),
                };
                (cap, Aqm::DropTail)
            }
            NodeKind::Switch => {
                let rng = Rng::stream(s.run.seed, StreamId { kind: streams::AQM, index: id as u64 });
                let mtu_time = rate.tx_time(s.max_frame_bytes());
                // A VOQ switch's admission never overfills its egress queue.
                let cap = if s.switch.voq.is_some() { Capacity::Unlimited } else { Capacity::Limited(s.switch.buffer) };
                (cap, Aqm::new(&s.switch.aqm.for_rate(rate), mtu_time, rng))
            }
        };
        let mut port = Port::new(node, peer, rate, delay, capacity, aqm);
        if let (NodeKind::Switch, Some(pq)) = (self.net.kinds[node as usize], &s.switch.phantom_queue) {
            port.pq = Some(Box::new(PhantomQueue::new(pq, rate)));
        }
        let name = &self.net.names[node as usize];
        let hscc = s.switch.hscc.as_ref().filter(|h| h.switches.as_ref().is_none_or(|names| names.contains(name)));
        if let (NodeKind::Switch, Some(h)) = (self.net.kinds[node as usize], hscc) {
            let (capacity, bytes) = match s.switch.buffer {
                QSize::Packets(n) => (n, n * s.max_frame_bytes()),
                QSize::Bytes(n) => (n, n),
            };
            port.set_hscc(Hscc::new(h, capacity, bytes));
        }
        if let (NodeKind::Switch, Some(sched)) = (self.net.kinds[node as usize], &s.switch.scheduler) {
            // Each class's AQM has its own random stream.
            let mtu_time = rate.tx_time(s.max_frame_bytes());
            let stream = |c: usize| Rng::stream(s.run.seed, StreamId { kind: streams::CLASS_AQM, index: ((id as u64) << 8) | c as u64 });
            let aqm = s.switch.aqm.for_rate(rate);
            let mut classes = Classes::new(sched, |c| Aqm::new(&aqm, mtu_time, stream(c)));
            if matches!(sched, Scheduler::StrictPriority(sp) if sp.full == FullBuffer::Trim) {
                classes.trim = Some(Rng::stream(s.run.seed, StreamId { kind: streams::NDP_TRIM, index: id as u64 }));
            }
            port.classes = Some(Box::new(classes));
        }
        if s.switch.shared_buffer.is_some() && self.net.kinds[node as usize] == NodeKind::Switch {
            port.shared = Some(node - self.net.num_hosts);
        }
        if s.link.loss_rate > 0.0 {
            port.loss = Some((s.link.loss_rate, Rng::stream(s.run.seed, StreamId { kind: streams::LINK_LOSS, index: id as u64 })));
        }
        self.net.ports.push(port);
        self.net.node_ports[node as usize].push(id);
        id
    }

    fn leaf_spine(&mut self, t: &LeafSpine) {
        let leaves: Vec<u32> = (0..t.leaves).map(|_| self.add_switch(t.leaf_latency.map(|d| d.0))).collect();
        let spines: Vec<u32> = (0..t.spines).map(|_| self.add_switch(t.spine_latency.map(|d| d.0))).collect();
        for h in 0..t.leaves * t.hosts_per_leaf {
            self.connect(h, leaves[(h / t.hosts_per_leaf) as usize], t.host_rate.0, t.host_delay.0);
        }
        let uplink = t.uplink();
        for &leaf in &leaves {
            for &spine in &spines {
                for _ in 0..t.links_per_pair {
                    self.connect(leaf, spine, uplink, t.uplink_delay.0);
                }
            }
        }
    }

    fn fat_tree(&mut self, t: &FatTree) {
        let (pods, half, per_edge) = (t.pods(), t.k / 2, t.hosts_per_edge());
        let lat = |d: Option<crate::units::DurV>| d.map(|d| d.0);
        // Per pod: its edge switches, then its aggregation switches (the order of `Topology::switch_names`).
        let mut edges = Vec::new();
        let mut aggs = Vec::new();
        for _ in 0..pods {
            for _ in 0..half {
                edges.push(self.add_switch(lat(t.edge_latency)));
            }
            for _ in 0..half {
                aggs.push(self.add_switch(lat(t.agg_latency)));
            }
        }
        let cores: Vec<u32> = (0..half * half).map(|_| self.add_switch(lat(t.core_latency))).collect();
        let (rate, fabric) = (t.link_rate.0, t.fabric_rate().0);
        for h in 0..t.hosts() as u32 {
            self.connect(h, edges[(h / per_edge) as usize], rate, t.host_delay.0);
        }
        for pod in 0..pods {
            for e in 0..half {
                for a in 0..half {
                    self.connect(edges[(pod * half + e) as usize], aggs[(pod * half + a) as usize], fabric, t.edge_agg_delay.0);
                }
            }
            // Aggregation switch a of every pod connects to cores a*half .. a*half + half - 1.
            for a in 0..half {
                for c in 0..half {
                    self.connect(aggs[(pod * half + a) as usize], cores[(a * half + c) as usize], fabric, t.agg_core_delay.0);
                }
            }
        }
    }

    /// A full-duplex link: one egress port at each end. A host's link gets
    /// its per-host extra delay (host.rtt_variation = per_host).
    fn connect(&mut self, a: u32, b: u32, rate: Rate, mut delay: Dur) {
        if let (NodeKind::Host, Some(RttVariation::PerHost(v))) = (self.net.kinds[a as usize], &self.scenario.host.rtt_variation) {
            delay += v.delays[a as usize % v.delays.len()].0;
        }
        // A link's two ports are consecutive, the first even (`Network::reverse`).
        let pa = self.port_for(a, b, rate, delay);
        let pb = self.port_for(b, a, rate, delay);
        assert!(pa % 2 == 0 && pb == pa + 1, "a link's ports are a pair");
    }
}

impl Network {
    /// The port on the other side of `port`'s link (the reverse
    /// direction): `connect` makes a link's two ports consecutive, the
    /// first even, so no table is read on a frame's path.
    #[inline(always)]
    pub fn reverse(port: u32) -> u32 {
        port ^ 1
    }

    pub fn build(s: &Scenario) -> Network {
        let h = s.topology.num_hosts();
        let net = Network {
            num_hosts: h,
            kinds: vec![NodeKind::Host; h as usize],
            names: (0..h).map(|i| format!("host{i}")).collect(),
            fwd_latency: Vec::new(),
            routing: s.switch.routing,
            shared: Vec::new(),
            spray_next: Vec::new(),
            ports: Vec::new(),
            node_ports: vec![Vec::new(); h as usize],
            fib_dense: Vec::new(),
            fib_runs: Vec::new(),
            fib_at: Vec::new(),
            fib_ports: Vec::new(),
        };
        let mut b = Builder { scenario: s, switch_names: s.topology.switch_names(), net };
        match &s.topology {
            Topology::Star(Star { hosts, link_rate, link_delay }) => {
                let sw = b.add_switch(None);
                for host in 0..*hosts {
                    b.connect(host, sw, link_rate.0, link_delay.0);
                }
            }
            Topology::Dumbbell(Dumbbell { senders, receivers, access_rate, access_delay, bottleneck_rate, bottleneck_delay }) => {
                let left = b.add_switch(None);
                let right = b.add_switch(None);
                for host in 0..*senders {
                    b.connect(host, left, access_rate.0, access_delay.0);
                }
                b.connect(left, right, bottleneck_rate.0, bottleneck_delay.0);
                for host in *senders..senders + receivers {
                    b.connect(host, right, access_rate.0, access_delay.0);
                }
            }
            Topology::Leafspine(t) => b.leaf_spine(t),
            Topology::Fattree(t) => b.fat_tree(t),
            Topology::Ring(t) => {
                let switches: Vec<u32> = (0..t.switches).map(|_| b.add_switch(None)).collect();
                for h in 0..t.switches * t.hosts_per_switch {
                    b.connect(h, switches[(h / t.hosts_per_switch) as usize], t.link_rate.0, t.host_delay.0);
                }
                for i in 0..switches.len() {
                    b.connect(switches[i], switches[(i + 1) % switches.len()], t.link_rate.0, t.link_delay.0);
                }
            }
        }
        let mut net = b.net;
        net.compute_fib();
        net
    }

    /// Shortest-path next hops (by hop count) from every switch to every host.
    ///
    /// Built destination by destination, without a (switch, host) table in
    /// a large network: each switch interns its distinct next-hop lists and
    /// codes its row as runs of destinations. A host on the same switch as
    /// the one before it (hosts have one link, and do not forward) changes
    /// only that switch's entry: every other switch reaches it through the
    /// same ports. So a k = 32 fat-tree needs one search per edge switch and
    /// a few MB, where a table of every (switch, host) list took 560 MB.
    fn compute_fib(&mut self) {
        let hosts = self.num_hosts as usize;
        let n = self.kinds.len();
        let switches = n - hosts;
        let dense = switches * hosts <= DENSE_FIB_ENTRIES;
        let mut interned: Vec<std::collections::HashMap<Vec<u32>, u32>> = vec![Default::default(); switches];
        let mut fib_ports = Vec::new();
        let mut table = vec![(0u32, 0u32); if dense { switches * hosts } else { 0 }];
        let mut rows: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); if dense { 0 } else { switches }];
        let mut dist = vec![u32::MAX; n];
        let mut frontier = std::collections::VecDeque::new();
        let mut hops = Vec::new();
        // The previous destination and its switch, when `dist` can be reused.
        let mut group: Option<(usize, u32)> = None;
        for dst in 0..hosts {
            let nic = self.node_ports[dst][0];
            let (up, tor) = (self.node_ports[dst].len() == 1 && self.ports[nic as usize].up, self.ports[nic as usize].peer);
            let same_tor = match group {
                Some((prev, g)) if up && g == tor => {
                    // What a search from `dst` would find: only the two
                    // hosts' own distances differ.
                    dist[dst] = 0;
                    let back = Network::reverse(self.node_ports[prev][0]);
                    dist[prev] = if self.ports[back as usize].up { 2 } else { u32::MAX };
                    true
                }
                _ => {
                    self.distances_to(dst, &mut dist, &mut frontier);
                    false
                }
            };
            group = (up && self.kinds[tor as usize] == NodeKind::Switch).then_some((dst, tor));
            for s in hosts..n {
                let i = s - hosts;
                if same_tor && s != tor as usize {
                    if dense {
                        table[i * hosts + dst] = table[i * hosts + dst - 1];
                    }
                    continue; // the run goes on
                }
                hops.clear();
                if dist[s] != u32::MAX {
                    for &p in &self.node_ports[s] {
                        let v = self.ports[p as usize].peer as usize;
                        if self.ports[p as usize].up && dist[v] != u32::MAX && dist[v] + 1 == dist[s] {
                            hops.push(p);
                        }
                    }
                }
                let start = match interned[i].get(hops.as_slice()) {
                    Some(&start) => start,
                    None => {
                        let start = fib_ports.len() as u32;
                        fib_ports.extend_from_slice(&hops);
                        interned[i].insert(hops.clone(), start);
                        start
                    }
                };
                let entry = (start, hops.len() as u32);
                if dense {
                    table[i * hosts + dst] = entry;
                } else if rows[i].last().map(|r| (r.1, r.2)) != Some(entry) {
                    rows[i].push((dst as u32, entry.0, entry.1));
                }
            }
        }
        self.fib_ports = fib_ports;
        self.fib_dense = table;
        self.fib_at = std::iter::once(0).chain(rows.iter().scan(0, |at, r| { *at += r.len() as u32; Some(*at) })).collect();
        self.fib_runs = rows.concat();
    }

    /// Hop counts from every node to host `dst` (breadth-first; hosts other
    /// than `dst` do not forward).
    fn distances_to(&self, dst: usize, dist: &mut [u32], frontier: &mut std::collections::VecDeque<u32>) {
        dist.fill(u32::MAX);
        dist[dst] = 0;
        frontier.clear();
        frontier.push_back(dst as u32);
        while let Some(u) = frontier.pop_front() {
            if u as usize != dst && self.kinds[u as usize] == NodeKind::Host {
                continue;
            }
            for &p in &self.node_ports[u as usize] {
                let v = self.ports[p as usize].peer;
                if self.ports[p as usize].up && dist[v as usize] == u32::MAX {
                    dist[v as usize] = dist[u as usize] + 1;
                    frontier.push_back(v);
                }
            }
        }
    }

    /// The (start, count) range of `fib_ports` switch `switch` uses toward `dst`.
    #[inline(always)]
    fn fib_entry(&self, switch: u32, dst: u32) -> (u32, u32) {
        let s = (switch - self.num_hosts) as usize;
        if !self.fib_dense.is_empty() {
            return self.fib_dense[s * self.num_hosts as usize + dst as usize];
        }
        self.fib_run_entry(s, dst)
    }

    /// `fib_entry` in a large network: binary search of the switch's runs.
    #[inline(never)]
    fn fib_run_entry(&self, s: usize, dst: u32) -> (u32, u32) {
        let runs = &self.fib_runs[self.fib_at[s] as usize..self.fib_at[s + 1] as usize];
        let (_, start, count) = runs[runs.partition_point(|r| r.0 <= dst) - 1];
        (start, count)
    }

    /// The egress port a switch uses toward `dst` for a flow with
    /// `flow_hash`: ECMP by the flow's hash mixed with the switch id (so
    /// switches do not all make the same choice), the same for all packets
    /// of the flow. (Always inlined, as `Heap::sift_down`, for the run
    /// loop's two copies.)
    #[inline(always)]
    pub fn next_port(&self, switch: u32, dst: u32, flow_hash: u32) -> Option<u32> {
        let (start, count) = self.fib_entry(switch, dst);
        let pick = match count {
            0 => return None, // no route (failed links)
            1 => 0,
            _ => mix32(flow_hash ^ switch.wrapping_mul(0x9E37_79B9)) % count,
        };
        Some(self.fib_ports[(start + pick) as usize])
    }

    /// Take a link (both directions) down or up and recompute the routes.
    /// Returns the frames that were waiting on it; the caller frees them.
    pub fn set_link(&mut self, now: dcsim_engine::SimTime, port: u32, up: bool, pool: &crate::packet::PacketPool) -> Vec<crate::packet::PktId> {
        let mut dropped = Vec::new();
        for p in [port, Network::reverse(port)] {
            let port = &mut self.ports[p as usize];
            port.up = up;
            if !up {
                let shared = port.shared.map(|i| &mut self.shared[i as usize]);
                dropped.extend(port.drain(now, pool, shared));
            }
        }
        self.compute_fib();
        dropped
    }

    /// The egress port for one packet: `next_port` under ECMP, round robin
    /// over the equal-cost ports under per-packet spraying, the next digit
    /// of the packet's path number (`flow_hash`, which it consumes) under
    /// source routes.
    pub fn route(&mut self, switch: u32, dst: u32, flow_hash: &mut u32) -> Option<u32> {
        match self.routing {
            Routing::Ecmp => self.next_port(switch, dst, *flow_hash),
            Routing::Path => {
                let (start, count) = self.fib_entry(switch, dst);
                if count <= 1 {
                    return (count == 1).then(|| self.fib_ports[start as usize]);
                }
                let pick = *flow_hash % count;
                *flow_hash /= count; // the rest of the route
                Some(self.fib_ports[(start + pick) as usize])
            }
            Routing::Spray => {
                let (start, count) = self.fib_entry(switch, dst);
                if count <= 1 {
                    return (count == 1).then(|| self.fib_ports[start as usize]);
                }
                let next = &mut self.spray_next[(switch - self.num_hosts) as usize];
                *next = next.wrapping_add(1);
                Some(self.fib_ports[(start + *next % count) as usize])
            }
        }
    }

    /// The host's NIC port (hosts have exactly one).
    #[inline]
    pub fn nic(&self, host: u32) -> u32 {
        self.node_ports[host as usize][0]
    }

    /// Equal-cost paths from `src` to `dst`: the product of the choices
    /// at each switch on the way (following the first; the topologies are
    /// symmetric). NDP's senders walk this many path numbers.
    pub fn paths_between(&self, src: u32, dst: u32) -> u32 {
        let mut node = self.ports[self.nic(src) as usize].peer;
        let mut paths: u32 = 1;
        for _ in 0..self.kinds.len() {
            if node == dst {
                return paths;
            }
            let (start, count) = self.fib_entry(node, dst);
            if count == 0 {
                break;
            }
            paths = paths.saturating_mul(count);
            node = self.ports[self.fib_ports[start as usize] as usize].peer;
        }
        1 // no route (failed links), or a loop
    }

    /// Switches a flow's packets cross from `src` to `dst` (0 if no route):
    /// what a receiver reads from the IP TTL (Swift's hop count).
    pub fn switches_between(&self, src: u32, dst: u32, flow_hash: u32) -> u32 {
        let mut node = self.ports[self.nic(src) as usize].peer;
        let mut hops = 0;
        while node != dst {
            let Some(p) = self.next_port(node, dst, flow_hash) else { return 0 };
            node = self.ports[p as usize].peer;
            hops += 1;
            if hops as usize > self.kinds.len() {
                return 0; // a routing loop (never in a valid table)
            }
        }
        hops
    }

    /// The ports a flow's packets traverse from `src` to `dst` (None: no route).
    pub fn path(&self, src: u32, dst: u32, flow_hash: u32) -> Option<Vec<u32>> {
        let mut path = vec![self.nic(src)];
        let mut node = self.ports[path[0] as usize].peer;
        while node != dst {
            let p = self.next_port(node, dst, flow_hash)?;
            path.push(p);
            node = self.ports[p as usize].peer;
            assert!(path.len() <= self.kinds.len(), "routing loop");
        }
        Some(path)
    }
}

/// A 32-bit finaliser (murmur3 fmix32) to spread hashes over next hops.
#[inline]
pub fn mix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (switch, host) next-hop list found the plain way, a search
    /// from each host, against the forwarding table's.
    fn assert_fib_is_shortest_paths(net: &Network) {
        let hosts = net.num_hosts as usize;
        let mut dist = vec![0; net.kinds.len()];
        let mut frontier = std::collections::VecDeque::new();
        for dst in 0..hosts {
            net.distances_to(dst, &mut dist, &mut frontier);
            for s in hosts..net.kinds.len() {
                let want: Vec<u32> = net.node_ports[s]
                    .iter()
                    .copied()
                    .filter(|&p| {
                        let v = net.ports[p as usize].peer as usize;
                        dist[s] != u32::MAX && net.ports[p as usize].up && dist[v] != u32::MAX && dist[v] + 1 == dist[s]
                    })
                    .collect();
                let (start, count) = net.fib_entry(s as u32, dst as u32);
                assert_eq!(&net.fib_ports[start as usize..(start + count) as usize], want.as_slice(), "switch {s} to host {dst}");
            }
        }
    }

    #[test]
    fn forwarding_is_every_shortest_path_with_and_without_failed_links() {
        let fattree = |k: u32| format!("[topology]\ntype = \"fattree\"\nk = {k}\nlink_rate = \"10Gbps\"\nhost_delay = \"1us\"\nedge_agg_delay = \"1us\"\nagg_core_delay = \"1us\"\n");
        let ring = "[topology]\ntype = \"ring\"\nswitches = 5\nhosts_per_switch = 3\nlink_rate = \"10Gbps\"\nhost_delay = \"1us\"\nlink_delay = \"1us\"\n".to_string();
        for (topology, runs) in [(fattree(16), true), (fattree(4), false), (ring, false)] {
            let s = Scenario::from_toml_str(&(topology + "[[workload]]\ntype = \"bulk\"\nsrc = 1\ndst = 0\nsize = \"1KB\"\n")).unwrap();
            let mut net = Network::build(&s);
            assert_eq!(net.fib_dense.is_empty(), runs);
            if runs {
                assert!(net.fib_runs.len() < 64 * (net.kinds.len() - net.num_hosts as usize), "{} runs", net.fib_runs.len());
            }
            assert_fib_is_shortest_paths(&net);
            // Host 1's link, the link from host 2's switch to host 2, and a
            // link between switches: hosts beside a failed one share its
            // switch's searches.
            let pool = crate::packet::PacketPool::default();
            let fabric = net.node_ports[net.num_hosts as usize].iter().copied().find(|&p| net.kinds[net.ports[p as usize].peer as usize] == NodeKind::Switch).unwrap();
            for port in [net.nic(1), Network::reverse(net.nic(2)), fabric] {
                net.set_link(dcsim_engine::SimTime::ZERO, port, false, &pool);
                assert_fib_is_shortest_paths(&net);
            }
            // One direction only: host 3's switch to host 3, and host 4 to its switch.
            for port in [net.nic(1), Network::reverse(net.nic(2)), fabric] {
                net.set_link(dcsim_engine::SimTime::ZERO, port, true, &pool);
            }
            let back = Network::reverse(net.nic(3));
            net.ports[back as usize].up = false;
            let nic4 = net.nic(4);
            net.ports[nic4 as usize].up = false;
            net.compute_fib();
            assert_fib_is_shortest_paths(&net);
        }
    }

    #[test]
    fn the_hpcc_authors_partial_fat_tree() {
        // Their mix/fat.txt: 320 hosts, 56 switches, 480 links; 100 Gb/s to
        // the hosts, 400 Gb/s between switches; six links across pods.
        let s = Scenario::from_toml_str(
            "[topology]\ntype = \"fattree\"\nk = 8\npods = 5\nhosts_per_edge = 16\nlink_rate = \"100Gbps\"\nfabric_rate = \"400Gbps\"\nhost_delay = \"1us\"\nedge_agg_delay = \"1us\"\nagg_core_delay = \"1us\"\n[[workload]]\ntype = \"bulk\"\nsrc = 1\ndst = 0\nsize = \"1KB\"\n",
        )
        .unwrap();
        let net = Network::build(&s);
        assert_eq!((net.num_hosts, net.kinds.len() - 320, net.ports.len()), (320, 56, 2 * 480));
        assert_eq!(net.ports.len() as u64, s.topology.num_ports());
        assert_eq!(net.ports[net.nic(0) as usize].rate.bps, 100_000_000_000);
        for (dst, links) in [(15, 2), (16, 4), (64, 6), (319, 6)] {
            let path = net.path(0, dst, 7).unwrap();
            assert_eq!(path.len(), links, "0 to {dst}");
            assert!(path[1..links - 1].iter().all(|&p| net.ports[p as usize].rate.bps == 400_000_000_000));
        }
    }
}
