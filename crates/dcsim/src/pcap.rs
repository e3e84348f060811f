//! Packet captures: nanosecond pcap files with the true header bytes of every
//! frame (Ethernet, IPv4 with its checksum, TCP with its options and a
//! checksum computed over a zero-filled payload), cut at a snap length.
//!
//! Addresses are derived from host indices: MAC 02:00:00:HH:HH:HH (locally
//! administered), IPv4 10.0.0.1 + host. The side that opens a connection uses
//! port 10000 + (connection mod 50000), the other side port 5001. Sequence
//! numbers on the wire are ISN + stream offset mod 2^32.

use crate::packet::{flags, FrameKind, Packet, ETH_FCS, IPV4_HEADER, TCP_HEADER};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};
use std::time::Duration;

/// What a capture point counted, from the model's own view of each frame
/// (to be compared with what a dissector derives from the bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureCounts {
    pub frames: u64,
    pub retransmissions: u64,
    pub duplicate_acks: u64,
    pub ce: u64,
    pub ece: u64,
    pub cwr: u64,
}

pub struct Capture {
    pub name: String,
    pub port: u32,
    /// Only this connection (set when the filtered flow starts); with a flow
    /// filter and no connection yet, nothing is recorded.
    pub conn: Option<u32>,
    filtered: bool,
    snaplen: u32,
    writer: PcapWriter<Vec<u8>>,
    frame: Vec<u8>,
    pub counts: CaptureCounts,
}

/// The peer's ISN is needed for the acknowledgement and SACK fields.
#[derive(Clone, Copy)]
pub struct Isns {
    pub own: u32,
    pub peer: u32,
}

pub fn mac(host: u32) -> [u8; 6] {
    let h = host.to_be_bytes();
    [0x02, 0, 0, h[1], h[2], h[3]]
}

pub fn ipv4(host: u32) -> [u8; 4] {
    (0x0A00_0001u32 + host).to_be_bytes()
}

pub fn tcp_port(conn: u32, side: u8) -> u16 {
    if side == 0 {
        10_000 + (conn % 50_000) as u16
    } else {
        5001
    }
}

fn checksum_add(mut sum: u32, bytes: &[u8]) -> u32 {
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u32) << 8;
    }
    sum
}

fn checksum_fold(mut sum: u32) -> u16 {
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// Append the TCP options of `p`, laid out as Linux does (see packet.rs).
fn push_options(p: &Packet, isns: Isns, out: &mut Vec<u8>) {
    let ts = |out: &mut Vec<u8>| {
        out.extend_from_slice(&[8, 10]);
        out.extend_from_slice(&p.ts_val.to_be_bytes());
        out.extend_from_slice(&p.ts_ecr.to_be_bytes());
    };
    if p.has(flags::SYN) {
        out.extend_from_slice(&[2, 4]);
        out.extend_from_slice(&p.syn_mss.to_be_bytes());
        if p.has_ts {
            if p.syn_sack_perm {
                out.extend_from_slice(&[4, 2]);
            } else {
                out.extend_from_slice(&[1, 1]);
            }
            ts(out);
        } else if p.syn_sack_perm {
            out.extend_from_slice(&[1, 1, 4, 2]);
        }
        if let Some(ws) = p.syn_wscale.get() {
            out.extend_from_slice(&[1, 3, 3, ws]);
        }
    } else {
        if p.has_ts {
            out.extend_from_slice(&[1, 1]);
            ts(out);
        }
        if p.nsack > 0 {
            out.extend_from_slice(&[1, 1, 5, 2 + 8 * p.nsack]);
            for &(a, b) in &p.sack[..p.nsack as usize] {
                out.extend_from_slice(&isns.peer.wrapping_add(a).to_be_bytes());
                out.extend_from_slice(&isns.peer.wrapping_add(b).to_be_bytes());
            }
        }
    }
}

/// A PFC PAUSE frame (IEEE 802.1Qbb; 802.3 Annex 31D): to the MAC Control
/// multicast address, EtherType 0x8808, opcode 0x0101, the class-enable
/// vector with the one class it carries, eight 16-bit times, padding.
fn pause_bytes(p: &Packet, out: &mut Vec<u8>) {
    out.extend_from_slice(&[0x01, 0x80, 0xC2, 0x00, 0x00, 0x01]);
    out.extend_from_slice(&mac(p.src_host));
    out.extend_from_slice(&[0x88, 0x08, 0x01, 0x01]);
    out.extend_from_slice(&(1u16 << p.dscp).to_be_bytes());
    for c in 0..8 {
        let time = if c == p.dscp { p.pause_quanta } else { 0 };
        out.extend_from_slice(&time.to_be_bytes());
    }
}

/// Ethernet and IPv4 headers (version 4, no options, DSCP and ECN, id 0,
/// DF, TTL 64, a valid checksum) of a frame carrying IP protocol `proto`.
fn eth_ipv4(p: &Packet, proto: u8, out: &mut Vec<u8>) {
    out.extend_from_slice(&mac(p.dst_host));
    out.extend_from_slice(&mac(p.src_host));
    out.extend_from_slice(&[0x08, 0x00]);
    let ip_start = out.len();
    out.extend_from_slice(&[0x45, p.dscp << 2 | p.ecn as u8]);
    out.extend_from_slice(&(p.ip_len() as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0, 0x40, 0, 64, proto, 0, 0]);
    out.extend_from_slice(&ipv4(p.src_host));
    out.extend_from_slice(&ipv4(p.dst_host));
    let ip_sum = checksum_fold(checksum_add(0, &out[ip_start..ip_start + IPV4_HEADER as usize]));
    out[ip_start + 10..ip_start + 12].copy_from_slice(&ip_sum.to_be_bytes());
}

/// The headers of a RoCEv2 packet (IBTA Annex A17): IPv4 with UDP to port
/// 4791, the base transport header (opcode, partition key 0xFFFF, the
/// destination QP, and in the 24-bit PSN field dcsim's byte offset: the
/// data's first byte, the next expected byte for ACK/NACK), the AETH on ACK/NACK
/// (syndrome 0x1F: ACK without credit; 0x60: NAK, PSN sequence error), and
/// on an ACK that echoes a CE mark, BTH's BECN bit. The
/// payload and the ICRC are written as zeros (the ICRC is not computed).
fn roce_bytes(p: &Packet, out: &mut Vec<u8>) {
    eth_ipv4(p, 17, out); // UDP
    let udp_len = (p.ip_len() - IPV4_HEADER) as u16;
    out.extend_from_slice(&(49152 + (p.conn % 16384) as u16).to_be_bytes()); // source port: per QP
    out.extend_from_slice(&4791u16.to_be_bytes());
    out.extend_from_slice(&udp_len.to_be_bytes());
    out.extend_from_slice(&[0, 0]); // UDP checksum 0 (RoCEv2 allows it)
    let (opcode, psn) = match p.kind {
        FrameKind::RoceData => (0x0A, p.seq), // RC RDMA WRITE Only
        FrameKind::RoceCnp => (0x81, 0),
        _ => (0x11, p.ack), // RC Acknowledge
    };
    out.extend_from_slice(&[opcode, 0, 0xFF, 0xFF]); // opcode, SE/M/pad/TVer, P_Key
    // FECN/BECN/reserved byte + 24-bit destination QP; BECN echoes a CE
    // mark in an ACK (RDMA DCTCP; IBA Vol. 1 §9.2 and Annex A10).
    let becn = if p.kind != FrameKind::RoceData && p.has(crate::packet::flags::ECE) { 0x4000_0000 } else { 0 };
    out.extend_from_slice(&((p.conn & 0x00FF_FFFF) | becn).to_be_bytes());
    let psn = (psn as u32) & 0x00FF_FFFF;
    out.extend_from_slice(&psn.to_be_bytes()); // A bit/reserved + 24-bit PSN
    match p.kind {
        FrameKind::RoceAck => out.extend_from_slice(&[0x1F, 0, 0, 0]),
        FrameKind::RoceNack => out.extend_from_slice(&[0x60, 0, 0, 0]),
        _ => {}
    }
}

/// An NDP frame (crate::ndp; docs/models/ndp.md): IPv4, protocol 253 (for
/// experiments, RFC 3692), and NDP's 26-byte header: ports (per flow, to
/// 7000), type, flags, sequence number (the data's first byte), cumulative
/// ACK, pull number, path (what is left of the packet's path number), timestamp 0 and
/// checksum 0. A trimmed packet is its header alone, its IP length too.
fn ndp_bytes(p: &Packet, out: &mut Vec<u8>) {
    eth_ipv4(p, 253, out); // experimental protocol
    let kind = match p.kind {
        FrameKind::NdpData => 0,
        FrameKind::NdpAck => 1,
        FrameKind::NdpNack => 2,
        _ => 3,
    };
    out.extend_from_slice(&(49152 + (p.conn % 16384) as u16).to_be_bytes());
    out.extend_from_slice(&7000u16.to_be_bytes());
    out.extend_from_slice(&[kind, p.flags]);
    out.extend_from_slice(&(p.seq as u32).to_be_bytes());
    out.extend_from_slice(&(p.ack as u32).to_be_bytes());
    out.extend_from_slice(&p.ts_val.to_be_bytes());
    out.extend_from_slice(&(p.flow_hash as u16).to_be_bytes());
    out.extend_from_slice(&[0; 6]); // timestamp, checksum
}

/// A Homa frame (crate::homa; docs/models/homa.md): IPv4 with UDP to port
/// 2222 (the simulator's), then Homa's header within the simulator's sizes
/// (30 B unscheduled, 16 B scheduled or grant): message id (8 B), type (0
/// unscheduled data, 1 scheduled data, 2 grant), priority (the packet's,
/// or the one a grant names), first byte or granted offset (4); then an
/// unscheduled packet's message length (4) and last byte (4), a grant's
/// bytes (2); the rest zeros. The field layout is dcsim's; the simulator
/// counts bytes only.
fn homa_bytes(p: &Packet, out: &mut Vec<u8>) {
    eth_ipv4(p, 17, out); // UDP
    let udp_len = (p.ip_len() - IPV4_HEADER) as u16;
    out.extend_from_slice(&(49152 + (p.conn % 16384) as u16).to_be_bytes());
    out.extend_from_slice(&2222u16.to_be_bytes());
    out.extend_from_slice(&udp_len.to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&(p.conn as u64).to_be_bytes());
    let unsched = p.has(crate::packet::homa_flags::UNSCHED);
    let (kind, prio) = match p.kind {
        FrameKind::HomaGrant => (2, p.ts_val as u8),
        _ => (if unsched { 0 } else { 1 }, p.dscp),
    };
    out.extend_from_slice(&[kind, prio]);
    out.extend_from_slice(&(p.seq as u32).to_be_bytes());
    if p.kind == FrameKind::HomaGrant {
        out.extend_from_slice(&(p.ack as u16).to_be_bytes());
    } else if unsched {
        out.extend_from_slice(&(p.ack as u32).to_be_bytes());
        out.extend_from_slice(&((p.seq + p.payload as u64).saturating_sub(1) as u32).to_be_bytes());
    }
}

/// The frame's bytes up to `snaplen` (without FCS), into `out`; returns the
/// frame's original length (without FCS, padding included).
pub fn frame_bytes(p: &Packet, isns: Isns, snaplen: usize, out: &mut Vec<u8>) -> u32 {
    out.clear();
    if p.kind != FrameKind::Tcp {
        if p.kind == FrameKind::Pause {
            pause_bytes(p, out);
        } else if p.kind.is_ndp() {
            ndp_bytes(p, out);
        } else if p.kind.is_homa() {
            homa_bytes(p, out);
        } else {
            roce_bytes(p, out);
        }
        let orig_len = (p.frame_len() - ETH_FCS) as u32;
        out.resize(orig_len as usize, 0);
        out.truncate(snaplen);
        return orig_len;
    }
    eth_ipv4(p, 6, out); // TCP
    // TCP
    let tcp_start = out.len();
    let hdr_len = (TCP_HEADER + p.tcp_options_len()) as u8;
    out.extend_from_slice(&tcp_port(p.conn, p.side).to_be_bytes());
    out.extend_from_slice(&tcp_port(p.conn, 1 - p.side).to_be_bytes());
    out.extend_from_slice(&isns.own.wrapping_add(p.seq as u32).to_be_bytes());
    let ack = if p.has(flags::ACK) { isns.peer.wrapping_add(p.ack as u32) } else { 0 };
    out.extend_from_slice(&ack.to_be_bytes());
    out.extend_from_slice(&[(hdr_len / 4) << 4 | (p.reserved & 0x0f), p.flags]);
    out.extend_from_slice(&p.window.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    push_options(p, isns, out);
    debug_assert_eq!(out.len() - tcp_start, hdr_len as usize);
    // Checksum over the pseudo-header, the header and a zero payload (zeros
    // add nothing to a ones'-complement sum; the length counts them).
    let tcp_len = (hdr_len as u32 + p.payload) as u16;
    let mut sum = checksum_add(0, &ipv4(p.src_host));
    sum = checksum_add(sum, &ipv4(p.dst_host));
    sum += 6 + tcp_len as u32;
    sum = checksum_add(sum, &out[tcp_start..]);
    let tcp_sum = checksum_fold(sum);
    out[tcp_start + 16..tcp_start + 18].copy_from_slice(&tcp_sum.to_be_bytes());
    // Zero payload and Ethernet padding, up to the snap length.
    let orig_len = (p.frame_len() - ETH_FCS) as u32;
    let keep = (orig_len as usize).min(snaplen);
    out.resize(keep.max(out.len().min(keep)), 0);
    out.truncate(keep);
    orig_len
}

impl Capture {
    pub fn new(name: String, port: u32, filtered: bool, snaplen: u32) -> Capture {
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen,
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
        };
        let writer = PcapWriter::with_header(Vec::new(), header).expect("writing to memory");
        Capture { name, port, conn: None, filtered, snaplen, writer, frame: Vec::with_capacity(256), counts: CaptureCounts::default() }
    }

    /// Record a frame seen at the capture point at `time_ps`.
    pub fn record(&mut self, time_ps: u64, p: &Packet, isns: Isns) {
        if self.filtered && self.conn != Some(p.conn) {
            return;
        }
        let orig = frame_bytes(p, isns, self.snaplen as usize, &mut self.frame);
        let ts = Duration::from_nanos(time_ps / 1000);
        self.writer.write_packet(&PcapPacket::new(ts, orig, &self.frame)).expect("writing to memory");
        let c = &mut self.counts;
        c.frames += 1;
        c.retransmissions += p.is_retx as u64;
        c.duplicate_acks += p.is_dup_ack as u64;
        c.ce += (p.ecn == crate::packet::Ecn::Ce) as u64;
        c.ece += p.has(flags::ECE) as u64;
        c.cwr += p.has(flags::CWR) as u64;
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.writer.into_writer()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_frame_is_64_bytes_with_its_class_and_time() {
        let p = Packet { kind: FrameKind::Pause, dscp: 3, pause_quanta: 0xFFFF, src_host: 9, ..Default::default() };
        let mut out = Vec::new();
        let len = frame_bytes(&p, Isns { own: 0, peer: 0 }, 1000, &mut out);
        assert_eq!(len, 60, "64 B with the FCS");
        assert_eq!(out.len(), 60);
        assert_eq!(&out[..6], [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01]);
        assert_eq!(&out[12..16], [0x88, 0x08, 0x01, 0x01], "MAC Control, PFC opcode");
        assert_eq!(&out[16..18], [0x00, 0x08], "class-enable vector: class 3");
        assert_eq!(&out[18 + 2 * 3..18 + 2 * 4], [0xFF, 0xFF], "class 3's time");
        assert!(out[34..].iter().all(|&b| b == 0), "padding");
    }

    #[test]
    fn a_roce_ack_is_66_bytes_and_echoes_a_mark_in_becn() {
        let ack = Packet { kind: FrameKind::RoceAck, conn: 5, ack: 3000, src_host: 1, dst_host: 0, ..Default::default() };
        let mut out = Vec::new();
        assert_eq!(frame_bytes(&ack, Isns { own: 0, peer: 0 }, 1000, &mut out), 62, "66 B with the FCS");
        let bth = 14 + 20 + 8;
        assert_eq!(&out[bth..bth + 4], [0x11, 0, 0xFF, 0xFF], "RC Acknowledge, P_Key");
        assert_eq!(&out[bth + 4..bth + 8], [0, 0, 0, 5], "no BECN, QP 5");
        assert_eq!(&out[bth + 8..bth + 12], 3000u32.to_be_bytes(), "the PSN field: the next expected byte");
        assert_eq!(&out[bth + 12..bth + 16], [0x1F, 0, 0, 0], "AETH: ACK");
        let echo = Packet { flags: flags::ECE, ..ack };
        frame_bytes(&echo, Isns { own: 0, peer: 0 }, 1000, &mut out);
        assert_eq!(out[bth + 4], 0x40, "BECN");
    }

    #[test]
    fn an_ndp_frame_is_ipv4_protocol_253_with_its_26_byte_header() {
        let data = Packet { kind: FrameKind::NdpData, conn: 2, seq: 18_000, ack: 0, ts_val: 0, payload: 9000, flow_hash: 7, src_host: 4, dst_host: 0, dscp: 1, ..Default::default() };
        let mut out = Vec::new();
        assert_eq!(frame_bytes(&data, Isns { own: 0, peer: 0 }, 100, &mut out), 9060, "9,064 B with the FCS");
        assert_eq!(out[23], 253, "IP protocol: experimental");
        assert_eq!(checksum_fold(checksum_add(0, &out[14..34])), 0, "a valid IPv4 header");
        assert_eq!(u16::from_be_bytes([out[16], out[17]]), 9046, "IP length: 20 + 26 + 9,000");
        let ndp = 34;
        assert_eq!(&out[ndp + 4..ndp + 6], [0, 0], "type: data, no flags");
        assert_eq!(&out[ndp + 6..ndp + 10], 18_000u32.to_be_bytes(), "sequence number");
        assert_eq!(&out[ndp + 18..ndp + 20], [0, 7], "path");
        let trimmed = Packet { flags: crate::packet::ndp_flags::TRIMMED, dscp: 0, ..data };
        assert_eq!(frame_bytes(&trimmed, Isns { own: 0, peer: 0 }, 100, &mut out), 60, "the header alone: 64 B with the FCS");
        assert_eq!(u16::from_be_bytes([out[16], out[17]]), 46);
        assert_eq!(out[ndp + 5], crate::packet::ndp_flags::TRIMMED);
    }

    #[test]
    fn a_homa_frame_is_udp_to_port_2222_with_the_simulators_header_sizes() {
        use crate::packet::homa_flags::UNSCHED;
        let data = Packet { kind: FrameKind::HomaData, conn: 5, seq: 1442, ack: 30_000, payload: 1442, flags: UNSCHED, dscp: 2, src_host: 1, dst_host: 3, ..Default::default() };
        let mut out = Vec::new();
        assert_eq!(frame_bytes(&data, Isns { own: 0, peer: 0 }, 100, &mut out), 1514, "1,518 B with the FCS");
        assert_eq!(out[23], 17, "IP protocol: UDP");
        assert_eq!(checksum_fold(checksum_add(0, &out[14..34])), 0, "a valid IPv4 header");
        assert_eq!(u16::from_be_bytes([out[16], out[17]]), 1500, "IP length: 20 + 8 + 30 + 1,442");
        let (udp, homa) = (34, 42);
        assert_eq!(&out[udp + 2..udp + 4], 2222u16.to_be_bytes(), "the simulator's port");
        assert_eq!(u16::from_be_bytes([out[udp + 4], out[udp + 5]]), 1480, "UDP length");
        assert_eq!(&out[homa..homa + 8], 5u64.to_be_bytes(), "message id");
        assert_eq!(&out[homa + 8..homa + 10], [0, 2], "unscheduled, priority 2");
        assert_eq!(&out[homa + 10..homa + 14], 1442u32.to_be_bytes(), "first byte");
        assert_eq!(&out[homa + 14..homa + 18], 30_000u32.to_be_bytes(), "message length");
        let grant = Packet { kind: FrameKind::HomaGrant, conn: 5, seq: 9328, ack: 1456, ts_val: 6, src_host: 3, dst_host: 1, ..Default::default() };
        assert_eq!(frame_bytes(&grant, Isns { own: 0, peer: 0 }, 100, &mut out), 60, "a 64-B frame: 44 B of IP padded");
        assert_eq!(u16::from_be_bytes([out[16], out[17]]), 44);
        assert_eq!(&out[homa + 8..homa + 10], [2, 6], "grant, to be sent at level 6");
        assert_eq!(&out[homa + 10..homa + 16], [0, 0, 0x24, 0x70, 0x05, 0xB0], "offset 9,328, 1,456 bytes");
    }

    #[test]
    fn headers_have_valid_checksums_and_lengths() {
        let p = Packet {
            conn: 3,
            side: 0,
            src_host: 1,
            dst_host: 0,
            seq: 1,
            ack: 1,
            payload: 1448,
            flags: flags::ACK | flags::PSH,
            ecn: crate::packet::Ecn::Ce,
            window: 512,
            has_ts: true,
            ts_val: 7,
            ts_ecr: 5,
            nsack: 1,
            sack: [(100, 200), (0, 0), (0, 0), (0, 0)],
            ..Default::default()
        };
        let mut buf = Vec::new();
        let orig = frame_bytes(&p, Isns { own: 1000, peer: 2000 }, 65535, &mut buf);
        assert_eq!(orig as u64, p.frame_len() - 4);
        assert_eq!(buf.len() as u32, orig);
        // IPv4 header sums to 0xFFFF with its checksum.
        assert_eq!(checksum_fold(checksum_add(0, &buf[14..34])), 0);
        // TCP checksum verifies over the pseudo-header and the whole segment.
        let tcp = &buf[34..];
        let mut sum = checksum_add(0, &buf[26..34]);
        sum += 6 + tcp.len() as u32;
        assert_eq!(checksum_fold(checksum_add(sum, tcp)), 0);
        assert_eq!(buf[15] & 3, 3, "CE in the ECN bits");
        assert_eq!(u32::from_be_bytes(buf[38..42].try_into().unwrap()), 1001);
        // A headers-only snap length keeps 128 bytes.
        assert_eq!(frame_bytes(&p, Isns { own: 0, peer: 0 }, 128, &mut buf), orig);
        assert_eq!(buf.len(), 128);
    }
}
