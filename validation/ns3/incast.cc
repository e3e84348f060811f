// ns-3 side of the incast comparison: one querier and N responders on a star
// (one switch), or with --switches=2 on a dumbbell (responders on the first
// switch, the querier on the second, one link between them: dcsim's dumbbell
// topology), every link 10 Gb/s (scaled, see common.h) and 2 us, drop-tail
// switch buffers.  Barrier-synchronised query/response over persistent
// connections, as dcsim's `incast` workload: once every connection is
// established the querier writes a query on each; each responder answers every
// complete query with the response; when all responses are in, the next round
// starts at once.  Prints one JSON object on stdout.
#include "common.h"

using namespace ns3;
using namespace dcsimval;

namespace
{
uint32_t g_n = 16;
uint32_t g_rounds = 20;
uint32_t g_querySize = 500;
uint32_t g_responseSize = 64000;

std::vector<Ptr<Socket>> g_qSocks;   // querier side, one per responder
std::vector<uint64_t> g_qGot;        // response bytes this round, per connection
uint32_t g_connected = 0;
uint32_t g_done = 0;
uint32_t g_round = 0;
Time g_roundStart;
uint64_t g_rtos = 0;       // RTO expiries at responders (RTO doubled by backoff)
uint64_t g_lossEntries = 0; // entries into CA_LOSS at responders
uint64_t g_retx = 0;        // retransmitted segments at responders
uint64_t g_rtosAtStart = 0, g_lossAtStart = 0, g_retxAtStart = 0;

struct RoundRec
{
    double start, end;
    uint64_t rtos, lossEntries, retx;
};

std::vector<RoundRec> g_recs;

void
StartRound()
{
    g_round++;
    g_done = 0;
    g_roundStart = Simulator::Now();
    g_rtosAtStart = g_rtos;
    g_lossAtStart = g_lossEntries;
    g_retxAtStart = g_retx;
    for (uint32_t i = 0; i < g_n; i++)
    {
        g_qGot[i] = 0;
        int r = g_qSocks[i]->Send(Create<Packet>(g_querySize));
        NS_ABORT_MSG_IF(r != static_cast<int>(g_querySize), "query send failed");
    }
}

void
QuerierRecv(uint32_t i, Ptr<Socket> s)
{
    Ptr<Packet> p;
    while ((p = s->Recv()))
    {
        uint64_t before = g_qGot[i];
        g_qGot[i] += p->GetSize();
        if (before < g_responseSize && g_qGot[i] >= g_responseSize)
        {
            g_done++;
        }
    }
    if (g_done == g_n)
    {
        g_done = 0;
        g_recs.push_back({g_roundStart.GetSeconds(), Simulator::Now().GetSeconds(),
                          g_rtos - g_rtosAtStart, g_lossEntries - g_lossAtStart, g_retx - g_retxAtStart});
        if (g_round < g_rounds)
        {
            Simulator::ScheduleNow(&StartRound);
        }
        else
        {
            Simulator::Stop();
        }
    }
}

void
Connected(Ptr<Socket>)
{
    if (++g_connected == g_n)
    {
        Simulator::ScheduleNow(&StartRound);
    }
}

std::vector<InetSocketAddress> g_respAddr;

void
ConnectAll()
{
    for (uint32_t i = 0; i < g_n; i++)
    {
        g_qSocks[i]->Connect(g_respAddr[i]);
    }
}

void
ConnectFailed(Ptr<Socket>)
{
    NS_FATAL_ERROR("connection failed");
}

// Responder side.
std::map<Ptr<Socket>, uint64_t> g_rPending;

void
RtoTrace(Time oldV, Time newV)
{
    // ReTxTimeout doubles m_rto (capped at 60 s); RTT updates never double it exactly.
    if (newV == oldV + oldV || (newV == Seconds(60) && oldV != newV && newV > oldV))
    {
        g_rtos++;
    }
}

void
CongStateTrace(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t newV)
{
    if (newV == TcpSocketState::CA_LOSS)
    {
        g_lossEntries++;
    }
}

void
RetxTrace(Ptr<const Packet>, const TcpHeader&, const Address&, const Address&, Ptr<const TcpSocketBase>)
{
    g_retx++;
}

void
ResponderRecv(Ptr<Socket> s)
{
    Ptr<Packet> p;
    while ((p = s->Recv()))
    {
        g_rPending[s] += p->GetSize();
    }
    while (g_rPending[s] >= g_querySize)
    {
        g_rPending[s] -= g_querySize;
        NS_ABORT_MSG_IF(s->GetTxAvailable() < g_responseSize, "send buffer too small");
        s->Send(Create<Packet>(g_responseSize));
    }
}

void
Accept(Ptr<Socket> s, const Address&)
{
    s->SetRecvCallback(MakeCallback(&ResponderRecv));
    s->TraceConnectWithoutContext("RTO", MakeCallback(&RtoTrace));
    s->TraceConnectWithoutContext("CongState", MakeCallback(&CongStateTrace));
    s->TraceConnectWithoutContext("Retransmission", MakeCallback(&RetxTrace));
}
} // namespace

int
main(int argc, char* argv[])
{
    Time::SetResolution(Time::PS);
    TcpSettings tcp;
    uint32_t buffer = 100;
    uint32_t switches = 1;
    double gbps = 10;
    std::string delay = "2us";
    CommandLine cmd;
    AddTcpArgs(cmd, tcp);
    cmd.AddValue("n", "responders", g_n);
    cmd.AddValue("rounds", "rounds", g_rounds);
    cmd.AddValue("querySize", "query bytes", g_querySize);
    cmd.AddValue("responseSize", "response bytes per responder", g_responseSize);
    cmd.AddValue("buffer", "switch egress buffer (packets, total)", buffer);
    cmd.AddValue("switches", "1: star; 2: responders and querier on two switches", switches);
    cmd.AddValue("gbps", "nominal link rate", gbps);
    cmd.AddValue("delay", "propagation delay per link", delay);
    cmd.Parse(argc, argv);
    ApplyTcpDefaults(tcp);

    NS_ABORT_MSG_IF(switches != 1 && switches != 2, "switches must be 1 or 2");
    NodeContainer hosts, sw;
    hosts.Create(g_n + 1); // host 0 = querier
    sw.Create(switches);
    InternetStackHelper stack;
    stack.InstallAll();
    PointToPointHelper p2p = MakeLink(gbps, delay);
    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
    SwitchAqm dropTail;
    std::vector<Ipv4Address> ip;
    for (uint32_t i = 0; i <= g_n; i++)
    {
        Ptr<Node> edge = (switches == 2 && i == 0) ? sw.Get(1) : sw.Get(0);
        NetDeviceContainer d = p2p.Install(hosts.Get(i), edge);
        InstallHostQdisc(d.Get(0));
        InstallSwitchQdisc(d.Get(1), buffer, dropTail, gbps);
        ip.push_back(addr.Assign(d).GetAddress(0));
        addr.NewNetwork();
    }
    if (switches == 2)
    {
        NetDeviceContainer d = p2p.Install(sw.Get(0), sw.Get(1));
        InstallSwitchQdisc(d.Get(0), buffer, dropTail, gbps);
        InstallSwitchQdisc(d.Get(1), buffer, dropTail, gbps);
        addr.Assign(d);
        addr.NewNetwork();
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    uint16_t port = 5001;
    for (uint32_t i = 1; i <= g_n; i++)
    {
        Ptr<Socket> l = Socket::CreateSocket(hosts.Get(i), TcpSocketFactory::GetTypeId());
        l->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        l->Listen();
        l->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                             MakeCallback(&Accept));
    }
    g_qGot.assign(g_n, 0);
    for (uint32_t i = 1; i <= g_n; i++)
    {
        Ptr<Socket> s = Socket::CreateSocket(hosts.Get(0), TcpSocketFactory::GetTypeId());
        s->Bind();
        s->SetConnectCallback(MakeCallback(&Connected), MakeCallback(&ConnectFailed));
        s->SetRecvCallback(MakeBoundCallback(&QuerierRecv, i - 1));
        g_qSocks.push_back(s);
        g_respAddr.push_back(InetSocketAddress(ip[i], port));
    }
    Simulator::ScheduleNow(&ConnectAll); // after every object is initialised
    Simulator::Stop(Seconds(100));
    Simulator::Run();

    std::cout << std::setprecision(15) << "{\"sim\":\"ns-3.44\",\"n\":" << g_n
              << ",\"events\":" << Simulator::GetEventCount()
              << ",\"rounds_completed\":" << g_recs.size() << ",\"rounds\":[";
    for (size_t i = 0; i < g_recs.size(); i++)
    {
        const auto& r = g_recs[i];
        std::cout << (i ? "," : "") << "{\"start\":" << r.start << ",\"end\":" << r.end
                  << ",\"completion_time\":" << (r.end - r.start) << ",\"timeouts\":" << r.rtos
                  << ",\"loss_entries\":" << r.lossEntries << ",\"retransmits\":" << r.retx << "}";
    }
    std::cout << "]}" << std::endl;
    Simulator::Destroy();
    return 0;
}
