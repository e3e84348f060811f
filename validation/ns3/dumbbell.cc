// ns-3 side of the dumbbell comparison: N senders -> left switch -> bottleneck
// -> right switch -> 1 receiver, long-lived bulk TCP flows, every link 10 Gb/s
// (scaled, see common.h) and 2 us.  Prints one JSON object on stdout.
#include "common.h"

using namespace ns3;
using namespace dcsimval;

namespace
{
Ptr<NetDevice> g_bnDev;
Ptr<QueueDisc> g_bnQd;
std::vector<uint32_t> g_samples;
Time g_sampleInterval;
Time g_end;

void
Sample()
{
    g_samples.push_back(WaitingPackets(g_bnDev, g_bnQd));
    Time next = Simulator::Now() + g_sampleInterval;
    if (next < g_end)
    {
        Simulator::Schedule(g_sampleInterval, &Sample);
    }
}

// Sender events counted over all sockets: retransmission timeouts (entries
// into CA_LOSS) and window updates that leave cwnd below one segment (a bulk
// sender then cannot send at all until an ACK or its timer).
uint64_t g_timeouts = 0;
uint64_t g_subSegmentCwnd = 0;
uint32_t g_segSize = 0;

void
OnCongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    g_timeouts += now == TcpSocketState::CA_LOSS;
}

void
OnCwnd(uint32_t, uint32_t now)
{
    g_subSegmentCwnd += now < g_segSize;
}

void
TraceSenders()
{
    Config::ConnectWithoutContext("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/CongState",
                                  MakeCallback(&OnCongState));
    Config::ConnectWithoutContext("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/CongestionWindow",
                                  MakeCallback(&OnCwnd));
}

struct Snapshot
{
    uint64_t rx = 0, marks = 0, drops = 0, devDrops = 0, timeouts = 0, subSegmentCwnd = 0;
};

Snapshot g_warm;
ApplicationContainer g_sinks;

Snapshot
Take()
{
    Snapshot s;
    for (uint32_t i = 0; i < g_sinks.GetN(); i++)
    {
        s.rx += DynamicCast<PacketSink>(g_sinks.Get(i))->GetTotalRx();
    }
    const auto& st = g_bnQd->GetStats();
    s.marks = st.nTotalMarkedPackets;
    s.drops = st.nTotalDroppedPackets;
    s.devDrops = DeviceDrops(g_bnDev);
    s.timeouts = g_timeouts;
    s.subSegmentCwnd = g_subSegmentCwnd;
    return s;
}

void
AtWarmup()
{
    g_warm = Take();
}
} // namespace

int
main(int argc, char* argv[])
{
    Time::SetResolution(Time::PS);
    TcpSettings tcp;
    uint32_t n = 8;
    uint32_t buffer = 250;
    SwitchAqm aqm;
    std::string duration = "50ms";
    std::string warmup = "10ms";
    std::string sample = "10us";
    double gbps = 10;
    std::string delay = "2us";
    CommandLine cmd;
    AddTcpArgs(cmd, tcp);
    cmd.AddValue("n", "senders", n);
    cmd.AddValue("buffer", "switch egress buffer (packets, total)", buffer);
    AddAqmArgs(cmd, aqm);
    cmd.AddValue("duration", "simulated time", duration);
    cmd.AddValue("warmup", "excluded from measurements", warmup);
    cmd.AddValue("sample", "queue sampling interval", sample);
    cmd.AddValue("gbps", "nominal link rate", gbps);
    cmd.AddValue("delay", "propagation delay per link", delay);
    cmd.Parse(argc, argv);
    g_segSize = ApplyTcpDefaults(tcp);

    NodeContainer senders, receiver, sw;
    senders.Create(n);
    receiver.Create(1);
    sw.Create(2);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper p2p = MakeLink(gbps, delay);
    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
    for (uint32_t i = 0; i < n; i++)
    {
        NetDeviceContainer d = p2p.Install(senders.Get(i), sw.Get(0));
        InstallHostQdisc(d.Get(0));
        InstallSwitchQdisc(d.Get(1), buffer, aqm, gbps);
        addr.Assign(d);
        addr.NewNetwork();
    }
    NetDeviceContainer bn = p2p.Install(sw.Get(0), sw.Get(1));
    InstallSwitchQdisc(bn.Get(0), buffer, aqm, gbps);
    InstallSwitchQdisc(bn.Get(1), buffer, aqm, gbps);
    addr.Assign(bn);
    addr.NewNetwork();
    NetDeviceContainer rd = p2p.Install(receiver.Get(0), sw.Get(1));
    InstallHostQdisc(rd.Get(0));
    InstallSwitchQdisc(rd.Get(1), buffer, aqm, gbps);
    Ipv4InterfaceContainer rif = addr.Assign(rd);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    uint16_t port = 5001;
    PacketSinkHelper sinkH("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    g_sinks = sinkH.Install(receiver.Get(0));
    g_sinks.Start(Seconds(0));
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(rif.GetAddress(0), port));
    bulk.SetAttribute("MaxBytes", UintegerValue(0));
    bulk.SetAttribute("SendSize", UintegerValue(65536));
    ApplicationContainer src = bulk.Install(senders);
    src.Start(Seconds(0));

    g_bnDev = bn.Get(0);
    g_bnQd = RootQdisc(g_bnDev);
    g_end = Time(duration);
    g_sampleInterval = Time(sample);
    Time w(warmup);
    Simulator::Schedule(NanoSeconds(1), &TraceSenders); // the sockets exist once the apps start
    Simulator::Schedule(w, &AtWarmup);
    Simulator::Schedule(w, &Sample);
    Simulator::Stop(g_end);
    Simulator::Run();
    Snapshot e = Take();
    double secs = (g_end - w).GetSeconds();

    std::cout << std::setprecision(12) << "{\"sim\":\"ns-3.44\",\"n\":" << n
              << ",\"events\":" << Simulator::GetEventCount()
              << ",\"window_s\":" << secs << ",\"rx_bytes\":" << (e.rx - g_warm.rx)
              << ",\"goodput_bps\":" << (e.rx - g_warm.rx) * 8.0 / secs
              << ",\"ecn_marks\":" << (e.marks - g_warm.marks)
              << ",\"drops\":" << (e.drops - g_warm.drops)
              << ",\"device_drops\":" << (e.devDrops - g_warm.devDrops)
              << ",\"timeouts\":" << (e.timeouts - g_warm.timeouts)
              << ",\"sub_segment_cwnd\":" << (e.subSegmentCwnd - g_warm.subSegmentCwnd)
              << ",\"rate\":\"" << ScaledRate(gbps) << "\",\"queue_samples\":[";
    for (size_t i = 0; i < g_samples.size(); i++)
    {
        std::cout << (i ? "," : "") << g_samples[i];
    }
    std::cout << "]}" << std::endl;
    Simulator::Destroy();
    return 0;
}
