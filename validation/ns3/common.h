// Shared set-up for the ns-3 side of the dcsim comparison (validation/compare_ns3.py).
// Everything here calls ns-3's public API only.
//
// Matching rules (see docs/validation-ns3.md):
//  * Links are PointToPoint.  ns-3's PPP framing adds 2 B to a 1500 B IP packet
//    (1502 B) where dcsim sends an Ethernet frame (14 B header + 4 B FCS: 1518 B).
//    The ns-3 rate is scaled by 1502/1518 so a full data frame takes exactly as
//    long to serialise (1.2144 us at "10 Gb/s") as in dcsim.
//  * Every switch egress port: a queue disc that is the real queue plus a
//    1-packet device queue (the frame waiting behind the one on the wire).
//    A qdisc of B-1 packets + 1 device slot = dcsim's B-packet buffer.
//  * Hosts: a very large FIFO qdisc (dcsim's NIC queues are unlimited).
//  * Time resolution is 1 ps, like dcsim's integer-picosecond clock.
#ifndef DCSIM_NS3_COMMON_H
#define DCSIM_NS3_COMMON_H

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace dcsimval
{
using namespace ns3;

// Settings shared by both programs (set from the command line).
struct TcpSettings
{
    std::string cc = "newreno"; // newreno | dctcp | cubic
    bool ecn = false;           // classic ECN (RFC 3168) for newreno/cubic; DCTCP always uses ECN
    bool hystart = false;       // TcpCubic's HyStart (dcsim has none)
    bool timestamps = false;
    uint32_t delAckCount = 1;   // 1 = no delayed ACK
    std::string delAckTimeout = "40ms";
    std::string minRto = "1ms";
    std::string clockGranularity = "1ns";
    std::string recovery = "classic"; // classic | prr
    uint32_t initialCwnd = 10;
    uint32_t rcvBuf = 1048576; // dcsim tcp.rcv_buffer = 1 MiB
};

inline void
AddTcpArgs(CommandLine& cmd, TcpSettings& t)
{
    cmd.AddValue("cc", "newreno, dctcp or cubic", t.cc);
    cmd.AddValue("ecn", "classic ECN (RFC 3168) with newreno or cubic", t.ecn);
    cmd.AddValue("hystart", "TcpCubic's HyStart", t.hystart);
    cmd.AddValue("delAckCount", "segments per delayed ACK (1: none)", t.delAckCount);
    cmd.AddValue("delAckTimeout", "delayed-ACK timer", t.delAckTimeout);
    cmd.AddValue("timestamps", "RFC 7323 timestamps", t.timestamps);
    cmd.AddValue("minRto", "minimum RTO", t.minRto);
    cmd.AddValue("clockGranularity", "TcpSocketBase::ClockGranularity", t.clockGranularity);
    cmd.AddValue("recovery", "classic (RFC 6675, cwnd = ssthresh at once) or prr (ns-3 default)",
                 t.recovery);
    cmd.AddValue("initialCwnd", "initial window (segments)", t.initialCwnd);
}

// Returns the segment size it set.
inline uint32_t
ApplyTcpDefaults(const TcpSettings& t)
{
    // MTU 1500: 1460 B payload without timestamps, 1448 B with them (as dcsim).
    uint32_t seg = t.timestamps ? 1448 : 1460;
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(seg));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(t.delAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Time(t.delAckTimeout)));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(t.initialCwnd));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(t.rcvBuf));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(8 * 1048576));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true)); // no Nagle
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1))); // dcsim initial_rto
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(100));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(t.timestamps));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(3));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Time(t.minRto)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(Time(t.clockGranularity)));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(1)));
    if (t.recovery == "classic")
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TcpClassicRecovery::GetTypeId()));
    }
    else
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TcpPrrRecovery::GetTypeId()));
    }
    if (t.cc == "dctcp")
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
        Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
        Config::SetDefault("ns3::TcpDctcp::DctcpShiftG", DoubleValue(1.0 / 16));
        Config::SetDefault("ns3::TcpDctcp::DctcpAlphaOnInit", DoubleValue(1.0));
        Config::SetDefault("ns3::TcpDctcp::UseEct0", BooleanValue(true));
    }
    else if (t.cc == "cubic")
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCubic::GetTypeId()));
        Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(t.hystart));
    }
    else
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    }
    if (t.ecn && t.cc != "dctcp")
    {
        Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
    }
    return seg;
}

// 10 Gb/s scaled by 1502/1518 (see above); serialisation of 1502 B = 1214400 ps.
inline std::string
ScaledRate(double gbps)
{
    double bps = gbps * 1e9 * 1502.0 / 1518.0;
    std::ostringstream s;
    s << static_cast<uint64_t>(bps) << "bps";
    return s.str();
}

inline PointToPointHelper
MakeLink(double gbps, const std::string& delay)
{
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(ScaledRate(gbps)));
    p2p.SetChannelAttribute("Delay", StringValue(delay));
    // Tiny device queue: the queue disc above it is the real queue.
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
    return p2p;
}

// Switch egress AQM (set from the command line).  Thresholds count the waiting
// frames, as dcsim's: the queue disc holds one fewer (the device slot).
struct SwitchAqm
{
    uint32_t k = 0;         // DCTCP step marking at K packets; 0 = off
    double redMinTh = 0;    // RED (Floyd & Jacobson) when > 0
    double redMaxTh = 0;
    double redMaxP = 0.1;
    double redWeight = 0.002;
    bool redGentle = true;
};

inline void
AddAqmArgs(CommandLine& cmd, SwitchAqm& a)
{
    cmd.AddValue("k", "DCTCP marking threshold (packets, total); 0 = off", a.k);
    cmd.AddValue("redMinTh", "RED min_th (packets, total); 0 = no RED", a.redMinTh);
    cmd.AddValue("redMaxTh", "RED max_th (packets, total)", a.redMaxTh);
    cmd.AddValue("redMaxP", "RED max_p", a.redMaxP);
    cmd.AddValue("redWeight", "RED queue weight", a.redWeight);
    cmd.AddValue("redGentle", "RED gentle mode", a.redGentle);
}

// Switch egress: drop-tail FIFO of `buffer` packets in total (qdisc buffer-1 + device 1);
// DCTCP step marking at K packets in total (RED with QW = 1, MinTh = MaxTh = K-1 on the
// qdisc, Gentle off, ECN marking instead of dropping); or RED marking ECT packets, as
// dcsim's `{ type = "red", action = "mark" }`: Floyd & Jacobson's p_a = p_b / (1 - count p_b)
// (Wait off), ECT packets marked in the forced region too (UseHardDrop off), and the idle
// decay counted in full frames at the link's rate.
inline void
InstallSwitchQdisc(Ptr<NetDevice> dev, uint32_t buffer, const SwitchAqm& a, double gbps)
{
    TrafficControlHelper tch;
    std::string size = std::to_string(buffer - 1) + "p";
    if (a.k != 0)
    {
        double th = a.k - 1;
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", StringValue(size),
                             "QW", DoubleValue(1.0),
                             "MinTh", DoubleValue(th),
                             "MaxTh", DoubleValue(th),
                             "Gentle", BooleanValue(false),
                             "UseEcn", BooleanValue(true),
                             "UseHardDrop", BooleanValue(false),
                             "MeanPktSize", UintegerValue(1500));
    }
    else if (a.redMinTh > 0)
    {
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", StringValue(size),
                             "QW", DoubleValue(a.redWeight),
                             "MinTh", DoubleValue(a.redMinTh - 1),
                             "MaxTh", DoubleValue(a.redMaxTh - 1),
                             "LInterm", DoubleValue(1.0 / a.redMaxP),
                             "Gentle", BooleanValue(a.redGentle),
                             "Wait", BooleanValue(false),
                             "UseEcn", BooleanValue(true),
                             "UseHardDrop", BooleanValue(false),
                             "LinkBandwidth", DataRateValue(DataRate(ScaledRate(gbps))),
                             "MeanPktSize", UintegerValue(1502));
    }
    else
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(size));
    }
    tch.Install(dev);
}

inline void
InstallHostQdisc(Ptr<NetDevice> dev)
{
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("1000000p"));
    tch.Install(dev);
}

inline Ptr<QueueDisc>
RootQdisc(Ptr<NetDevice> dev)
{
    return dev->GetNode()->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(dev);
}

// Packets waiting at an egress port: qdisc + device queue (not the frame on the wire).
inline uint32_t
WaitingPackets(Ptr<NetDevice> dev, Ptr<QueueDisc> qd)
{
    auto p2p = DynamicCast<PointToPointNetDevice>(dev);
    return qd->GetNPackets() + p2p->GetQueue()->GetNPackets();
}

inline uint64_t
DeviceDrops(Ptr<NetDevice> dev)
{
    return DynamicCast<PointToPointNetDevice>(dev)->GetQueue()->GetTotalDroppedPackets();
}

} // namespace dcsimval

#endif
