//! Packets: plain structs of the header fields that matter, with byte-exact
//! sizes on the wire, kept in a slab and addressed by [`PktId`].
//!
//! There is no payload, only its length. The frame size counts the Ethernet
//! header (14 B) and FCS (4 B), the IPv4 header (20 B, no options), the TCP
//! header (20 B) and its options padded to 4 bytes as Linux lays them out,
//! padding up to the 64-byte Ethernet minimum, and optionally the preamble+SFD
//! (8 B). The inter-frame gap is time between frames, kept by the port.

use dcsim_engine::SimTime;

pub const ETH_HEADER: u64 = 14;
pub const ETH_FCS: u64 = 4;
pub const ETH_MIN_FRAME: u64 = 64;
pub const PREAMBLE: u64 = 8;
pub const IFG: u64 = 12;
pub const IPV4_HEADER: u64 = 20;
pub const TCP_HEADER: u64 = 20;

/// TCP option bytes, padded as Linux emits them (RFC 7323 Appendix A layout).
pub const OPT_TIMESTAMPS: u64 = 12; // NOP NOP TS(10)
pub const OPT_MSS: u64 = 4;
pub const OPT_WSCALE: u64 = 4; // NOP WS(3)
pub const OPT_SACK_PERM: u64 = 4; // NOP NOP SACKOK(2), or folded into the TS word
/// Maximum SACK blocks that fit with and without timestamps (40 B of options).
pub const MAX_SACK_BLOCKS_TS: usize = 3;
pub const MAX_SACK_BLOCKS: usize = 4;

pub mod flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const URG: u8 = 0x20;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
}

/// The IP ECN field (RFC 3168).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    Ect1 = 1,
    Ect0 = 2,
    Ce = 3,
}

impl Ecn {
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// What a frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FrameKind {
    /// A TCP/IP segment.
    #[default]
    Tcp,
    /// A PFC PAUSE frame (IEEE 802.1Qbb; crate::pfc) for the class in
    /// `dscp` (the priority it pauses) and `pause_quanta`.
    Pause,
    /// RoCEv2 (crate::rdma): a data packet of queue pair `conn` (bytes
    /// [`seq`, `seq + payload`) of its message), an ACK or a NACK (`ack`: the
    /// next byte expected), a CNP.
    RoceData,
    RoceAck,
    RoceNack,
    RoceCnp,
    /// NDP (crate::ndp): a data packet of flow `conn` (bytes [`seq`, `seq +
    /// payload`)), which a switch may trim to its header (`ndp_flags::TRIMMED`);
    /// the receiver's ACK or NACK of the packet at `seq` (`ack`: bytes
    /// received in order; with `ndp_flags::PULL` also a pull, numbered
    /// `ts_val`); and a PULL (numbered `ts_val`).
    NdpData,
    NdpAck,
    NdpNack,
    NdpPull,
    /// Homa (crate::homa): bytes [`seq`, `seq + payload`) of message `conn`
    /// (`ack`: the message's length), unscheduled (`homa_flags::UNSCHED`)
    /// or sent for a grant; and a receiver's GRANT of `payload` bytes at
    /// offset `seq`, to be sent at priority `ts_val`.
    HomaData,
    HomaGrant,
}

/// NDP's header (docs/models/ndp.md): ports (4 B), type and flags (2),
/// sequence number (4), cumulative ACK (4), pull number (4), path (2),
/// timestamp (4) and checksum (2). With IPv4 and Ethernet a header-only
/// frame is 64 B, the frame htsim's NDP sends.
pub const NDP_HEADER: u64 = 26;

/// NDP's flags (in `Packet::flags`, which NDP frames do not use for TCP's).
pub mod ndp_flags {
    /// A switch cut the payload off: the header stands for the packet.
    pub const TRIMMED: u8 = 0x01;
    /// An ACK or NACK that is also the receiver's next pull.
    pub const PULL: u8 = 0x02;
    /// A trimmed header that found no room and was sent back to its sender
    /// (return-to-sender; its addresses are swapped).
    pub const BOUNCED: u8 = 0x04;
}

/// Homa's headers as the authors' simulator counts them (HomaSimulation's
/// `HomaPkt::headerSize`; docs/models/homa.md): an unscheduled data
/// packet's (message id 8 B, length 4, unscheduled bytes 2, first and last
/// byte 4 + 4, one priority/bytes pair 8), a scheduled data packet's and a
/// GRANT's (message id 8, first and last byte or offset, size and
/// priority). All ride on UDP.
pub const HOMA_UNSCHED_HEADER: u64 = 30;
pub const HOMA_SCHED_HEADER: u64 = 16;
pub const HOMA_GRANT_HEADER: u64 = 16;

/// Homa's flags (in `Packet::flags`).
pub mod homa_flags {
    /// Sent before any grant (the first RTTbytes of the message).
    pub const UNSCHED: u8 = 0x01;
}

/// RoCEv2's headers around an IB packet (IBTA Annex A17): UDP, the base
/// transport header, the invariant CRC; and the ACK extended transport
/// header (AETH) and a CNP's 16 reserved bytes.
pub const UDP_HEADER: u64 = 8;
pub const ROCE_BTH: u64 = 12;
pub const ROCE_ICRC: u64 = 4;
pub const ROCE_AETH: u64 = 4;
pub const ROCE_CNP_PAD: u64 = 16;

impl FrameKind {
    pub fn is_roce(self) -> bool {
        matches!(self, FrameKind::RoceData | FrameKind::RoceAck | FrameKind::RoceNack | FrameKind::RoceCnp)
    }
    pub fn is_ndp(self) -> bool {
        matches!(self, FrameKind::NdpData | FrameKind::NdpAck | FrameKind::NdpNack | FrameKind::NdpPull)
    }
    pub fn is_homa(self) -> bool {
        matches!(self, FrameKind::HomaData | FrameKind::HomaGrant)
    }
}

/// A SYN's window-scale option in one byte (0: absent, else the shift + 1),
/// which keeps `Packet` within 112 bytes (a test holds it there).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WScale(u8);

impl WScale {
    pub fn new(shift: Option<u8>) -> WScale {
        WScale(shift.map_or(0, |s| s.min(254) + 1))
    }
    pub fn get(self) -> Option<u8> {
        self.0.checked_sub(1)
    }
}

/// Index of a packet in the [`PacketPool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PktId(pub u32);

/// One frame: a TCP/IP packet, or a PFC PAUSE frame (`kind`). Sequence numbers are 64-bit offsets in the sender's
/// stream (the SYN is 0, the first data byte 1); the 32-bit wire value is
/// `(ISN + offset) mod 2^32`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Packet {
    /// Connection index and which side sent it (0 = the side that opened it).
    pub conn: u32,
    pub side: u8,
    pub src_host: u32,
    pub dst_host: u32,
    /// Per-flow hash for ECMP (fixed for the connection).
    pub flow_hash: u32,
    pub seq: u64,
    pub ack: u64,
    pub payload: u32,
    pub flags: u8,
    pub ecn: Ecn,
    /// The IP DSCP (6 bits): PIAS's priority class (crate::sched).
    pub dscp: u8,
    /// The 16-bit TCP window field as sent (already right-shifted by the scale).
    pub window: u16,
    /// SYN options.
    pub syn_mss: u16,
    pub syn_wscale: WScale,
    pub syn_sack_perm: bool,
    /// Timestamps option (RFC 7323), when present.
    pub has_ts: bool,
    pub ts_val: u32,
    pub ts_ecr: u32,
    /// SACK blocks as the wire carries them: the low 32 bits of [start,
    /// end) stream offsets (`sack_blocks` widens them around `ack`).
    pub nsack: u8,
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
    /// This data segment is a retransmission (for counters only; not on the wire).
    pub is_retx: bool,
    /// The 4 reserved bits of the TCP header (RFC 9293 §3.1), where HSCC's
    /// end-host shim carries the sender's window scale to the switch.
    pub reserved: u8,
    /// The sender's last ACK carried ECE (ns-2's `gotecnecho`, read by a HULL
    /// pacer; not on the wire).
    pub got_ecn_echo: bool,
    /// This pure ACK repeats the acknowledgement number and window of the
    /// previous segment its sender sent (a duplicate ACK; counters only).
    pub is_dup_ack: bool,
    /// Bytes on the wire (the frame, plus the preamble when configured).
    pub wire_bytes: u32,
    /// When the packet entered the queue it is in (for sojourn-time AQMs).
    pub enqueued_at: SimTime,
    pub kind: FrameKind,
    /// A PAUSE frame's time (zero: resume); its class is in `dscp`.
    pub pause_quanta: u16,
    /// With PFC: the switch port it came in on (its ingress accounting).
    pub ingress_port: u32,
    /// HPCC: bytes of the INT header a RoCE data packet or ACK carries
    /// (crate::hpcc; the records themselves are in the world's side table).
    pub int_bytes: u8,
}

impl Packet {
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }

    /// Append a SACK block of [start, end) stream offsets.
    #[inline]
    pub fn push_sack(&mut self, start: u64, end: u64) {
        self.sack[self.nsack as usize] = (start as u32, end as u32);
        self.nsack += 1;
    }

    /// The SACK blocks as stream offsets: each 32-bit edge is taken as the
    /// offset nearest the acknowledgement number (RFC 9293's sequence
    /// arithmetic), as a receiver of the wire fields reads them.
    #[inline]
    pub fn sack_blocks(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let widen = move |x: u32| self.ack.wrapping_add(x.wrapping_sub(self.ack as u32) as i32 as i64 as u64);
        self.sack[..self.nsack as usize].iter().map(move |&(a, b)| (widen(a), widen(b)))
    }

    /// Swift: how long the receiver held the segment this ACK echoes, in ns
    /// (the remote delay Swift's own header carries, §3.1). A TCP frame has
    /// no field for it: it rides in the last SACK slot, which a segment with
    /// the timestamp option (Swift's) never fills, since only
    /// MAX_SACK_BLOCKS_TS blocks fit beside it; the frame keeps its bytes.
    #[inline]
    pub fn echo_hold_ns(&self) -> u32 {
        self.sack[MAX_SACK_BLOCKS - 1].0
    }

    #[inline]
    pub fn set_echo_hold_ns(&mut self, ns: u32) {
        self.sack[MAX_SACK_BLOCKS - 1].0 = ns;
    }

    /// Length of the TCP options, padded as Linux lays them out.
    #[inline]
    pub fn tcp_options_len(&self) -> u64 {
        if self.has(flags::SYN) {
            return self.syn_options_len();
        }
        // Every segment takes this path: kept free of branches.
        let ts = OPT_TIMESTAMPS * self.has_ts as u64;
        let sack = (4 + 8 * self.nsack as u64) * (self.nsack > 0) as u64; // NOP NOP kind len + blocks
        debug_assert!(ts + sack <= 40);
        ts + sack
    }

    #[cold]
    fn syn_options_len(&self) -> u64 {
        let mut n = OPT_MSS;
        if self.has_ts {
            n += OPT_TIMESTAMPS; // SACKOK rides in the TS word's NOPs
        } else if self.syn_sack_perm {
            n += OPT_SACK_PERM;
        }
        if self.syn_wscale.get().is_some() {
            n += OPT_WSCALE;
        }
        n
    }

    /// IP datagram length (IPv4 total length field).
    #[inline]
    pub fn ip_len(&self) -> u64 {
        match self.kind {
            FrameKind::Tcp | FrameKind::Pause => IPV4_HEADER + TCP_HEADER + self.tcp_options_len() + self.payload as u64,
            _ => self.other_ip_len(),
        }
    }

    /// RoCE's, NDP's and Homa's IP lengths (out of TCP's way).
    #[inline(never)]
    fn other_ip_len(&self) -> u64 {
        let roce = IPV4_HEADER + UDP_HEADER + ROCE_BTH + ROCE_ICRC;
        match self.kind {
            FrameKind::RoceData => roce + self.int_bytes as u64 + self.payload as u64,
            FrameKind::RoceAck | FrameKind::RoceNack => roce + ROCE_AETH + self.int_bytes as u64,
            FrameKind::RoceCnp => roce + ROCE_CNP_PAD,
            FrameKind::NdpData if !self.has(ndp_flags::TRIMMED) => IPV4_HEADER + NDP_HEADER + self.payload as u64,
            FrameKind::NdpData | FrameKind::NdpAck | FrameKind::NdpNack | FrameKind::NdpPull => IPV4_HEADER + NDP_HEADER,
            FrameKind::HomaData if self.has(homa_flags::UNSCHED) => IPV4_HEADER + UDP_HEADER + HOMA_UNSCHED_HEADER + self.payload as u64,
            FrameKind::HomaData => IPV4_HEADER + UDP_HEADER + HOMA_SCHED_HEADER + self.payload as u64,
            FrameKind::HomaGrant => IPV4_HEADER + UDP_HEADER + HOMA_GRANT_HEADER,
            FrameKind::Tcp | FrameKind::Pause => unreachable!("ip_len has TCP's"),
        }
    }

    /// Ethernet frame length including header and FCS, padded to 64 bytes.
    #[inline]
    pub fn frame_len(&self) -> u64 {
        match self.kind {
            FrameKind::Pause => crate::pfc::PAUSE_FRAME_BYTES,
            _ => (ETH_HEADER + self.ip_len() + ETH_FCS).max(ETH_MIN_FRAME),
        }
    }

    /// Compute and store the on-the-wire size.
    pub fn finalize_size(&mut self, preamble: bool) {
        let extra = if preamble { PREAMBLE } else { 0 };
        self.wire_bytes = (self.frame_len() + extra) as u32;
    }
}

/// A slab of packets with a free list: no allocation per packet once warm.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketPool {
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            PktId(i)
        } else {
            self.slots.push(p);
            PktId(self.slots.len() as u32 - 1)
        }
    }
    #[inline]
    pub fn free(&mut self, id: PktId) {
        self.free.push(id.0);
    }
    #[inline]
    pub fn get(&self, id: PktId) -> &Packet {
        &self.slots[id.0 as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id.0 as usize]
    }
    /// Packets currently allocated (in queues, on links or in switches).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sack_edges_widen_around_the_ack_and_packets_stay_small() {
        let ack = (5u64 << 32) + 0xFFFF_F000; // 4 KB below a 32-bit wrap
        let mut p = Packet { ack, ..Default::default() };
        let blocks = [(ack + 1000, ack + 3000), (ack + 5000, ack + 9000), (ack - 400, ack - 100)];
        for (a, b) in blocks {
            p.push_sack(a, b); // the second block crosses the wrap; the third lies below the ACK
        }
        assert_eq!(p.sack_blocks().collect::<Vec<_>>(), blocks);
        // Every packet event touches one: keep it within two cache lines.
        assert!(std::mem::size_of::<Packet>() <= 112, "{}", std::mem::size_of::<Packet>());
    }

    #[test]
    fn frame_sizes_are_byte_exact() {
        // Full segment, MTU 1500, timestamps: 1448 B payload in a 1518 B frame.
        let mut p = Packet { flags: flags::ACK, has_ts: true, payload: 1448, ..Default::default() };
        assert_eq!(p.ip_len(), 1500);
        assert_eq!(p.frame_len(), 1518);
        p.finalize_size(true);
        assert_eq!(p.wire_bytes, 1526, "with the preamble");
        // Pure ACK with timestamps: 14 + 20 + 32 + 4 = 70 B.
        let a = Packet { flags: flags::ACK, has_ts: true, ..Default::default() };
        assert_eq!(a.frame_len(), 70);
        // Pure ACK without options is padded to the 64 B minimum.
        let b = Packet { flags: flags::ACK, ..Default::default() };
        assert_eq!(b.frame_len(), 64);
        // SYN with MSS, SACK-permitted, timestamps, window scale: 20 B of options.
        let s = Packet { flags: flags::SYN, has_ts: true, syn_sack_perm: true, syn_wscale: WScale::new(Some(7)), ..Default::default() };
        assert_eq!(s.tcp_options_len(), 20);
        assert_eq!(s.frame_len(), 14 + 20 + 40 + 4);
        // ACK with timestamps and 3 SACK blocks: 12 + 28 = 40 B of options.
        let k = Packet { flags: flags::ACK, has_ts: true, nsack: 3, ..Default::default() };
        assert_eq!(k.tcp_options_len(), 40);
        // RoCEv2: 1000 B of payload in 14 + 20 + 8 + 12 + 1000 + 4 + 4 B; an
        // ACK with its AETH, 66 B; a CNP, 78 B.
        let d = Packet { kind: FrameKind::RoceData, payload: 1000, ..Default::default() };
        assert_eq!(d.frame_len(), 1062);
        assert_eq!(Packet { kind: FrameKind::RoceAck, ..Default::default() }.frame_len(), 66);
        assert_eq!(Packet { kind: FrameKind::RoceNack, ..Default::default() }.frame_len(), 66);
        assert_eq!(Packet { kind: FrameKind::RoceCnp, ..Default::default() }.frame_len(), 78);
        // NDP: 9000 B of payload in a 9064 B frame; trimmed, ACK, NACK and PULL are 64 B.
        let mut n = Packet { kind: FrameKind::NdpData, payload: 9000, ..Default::default() };
        assert_eq!(n.frame_len(), 9064);
        n.flags |= ndp_flags::TRIMMED;
        assert_eq!(n.frame_len(), 64);
        for kind in [FrameKind::NdpAck, FrameKind::NdpNack, FrameKind::NdpPull] {
            assert_eq!(Packet { kind, ..Default::default() }.frame_len(), 64);
        }
        // Homa (the simulator's sizes): 1442 B unscheduled or 1456 B
        // scheduled fill a 1518-B frame; a GRANT's 44 B of IP pad to 64.
        let u = Packet { kind: FrameKind::HomaData, payload: 1442, flags: homa_flags::UNSCHED, ..Default::default() };
        assert_eq!(u.frame_len(), 1518);
        assert_eq!(Packet { kind: FrameKind::HomaData, payload: 1456, ..Default::default() }.frame_len(), 1518);
        assert_eq!(Packet { kind: FrameKind::HomaGrant, ..Default::default() }.frame_len(), 64);
    }
}
