// ns-3 side of the fabric benchmarks (bench/compare_ns3.py): a k-ary fat-tree
// or a leaf-spine, built as dcsim's topology.rs builds them, carrying a given
// list of TCP flows.  Prints one JSON object on stdout.
//
//  * Same numbering as dcsim: nodes are created hosts first (0..H-1), then the
//    switches in dcsim's order (fat-tree: per pod its k/2 edge then k/2
//    aggregation switches, then the (k/2)^2 cores; leaf-spine: leaves, then
//    spines), and links are made in dcsim's order, so host h here is host h
//    in dcsim and every switch's ports are listed in the same order.
//    Fat-tree host h hangs off edge switch h / (k/2); aggregation switch a of
//    every pod connects to cores a*k/2 .. a*k/2 + k/2 - 1.  Leaf-spine host h
//    hangs off leaf h / hostsPerLeaf; every leaf has one uplink to every spine.
//  * Links, switch buffers (qdisc B-1 packets + 1-packet device queue),
//    DCTCP marking (RED, QW = 1, MinTh = MaxTh = K-1, ECN) and host FIFOs come
//    from common.h, as in dumbbell.cc and incast.cc.
//  * Workload: the flows are read from a CSV file (src,dst,bytes,start_ps),
//    the flow list of a dcsim run of the same scenario, so both simulators
//    carry the same flows; nothing is sampled here.  Each flow is one
//    BulkSend (MaxBytes = bytes, a new connection with handshake and FIN,
//    as dcsim's per-flow connections) to its own PacketSink, started at the
//    flow's start time.  A flow's FCT is from that start to the moment its
//    sink has all the bytes (dcsim: the receiver has them all).
//  * Routing (--ecmp):
//      flow   (default) per-flow ECMP like dcsim: FlowEcmpRouting below, a
//             small Ipv4RoutingProtocol written against ns-3's public API.
//             Shortest paths by hop count (hosts do not forward), computed
//             from the topology; at a switch with several equal-cost next
//             hops the packet's 5-tuple (addresses, protocol, ports) is hashed
//             with the switch's id, so every packet of a flow takes one path
//             and different switches choose independently.  ns-3 3.44's own
//             Ipv4GlobalRouting has no per-flow ECMP; it is also slow on
//             large fabrics (GlobalRouteManager runs an SPF from every node,
//             and a lookup scans a list of all routes).  The hash function is
//             not dcsim's, so a flow's path differs from its path in dcsim;
//             the spread over paths is statistically the same.
//      random ns-3's Ipv4GlobalRouting with RandomEcmpRouting = true: every
//             packet picks one of the equal-cost next hops at random
//             (per-packet spraying; reorders packets of a flow).  Shown for
//             comparison only.
//
// Output: events, flow completion times (in CSV order, null if the flow did
// not finish), sender timeouts and retransmissions, switch drops and ECN
// marks, and how the packets spread over the uplinks of each layer.  With
// --checkPaths, every forwarded packet's 5-tuple is also recorded per switch
// to count flows per uplink and flows that left one switch on more than one
// port.
#include "common.h"

#include <cmath>
#include <fstream>
#include <map>
#include <unordered_map>

using namespace ns3;
using namespace dcsimval;

namespace
{

// --------------------------------------------------------------------------- topology

struct Fabric
{
    uint32_t hosts = 0;
    NodeContainer nodes;          // node i = dcsim node i
    std::vector<uint8_t> layer;   // 0 host, 1 edge/leaf, 2 aggregation/spine, 3 core
    std::vector<std::string> names;
    // Per node, in link order: (peer node, IPv4 interface index on this node).
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> adj;
    // Per node, per interface index: the route to the neighbour on it
    // (source = own address there, gateway = the neighbour's address).
    std::vector<std::vector<Ptr<Ipv4Route>>> ifRoute;
    std::vector<Ipv4Address> hostAddr;
    // Forwarding: switch s (index s - hosts) toward host d: fib[(s - hosts) * hosts + d]
    // = (start, count) in fibIf, the equal-cost egress interface indices.
    std::vector<std::pair<uint32_t, uint32_t>> fib;
    std::vector<uint32_t> fibIf;
    // Every switch egress device (node, interface index, device).
    struct SwitchPort
    {
        uint32_t node, iface, peer;
        Ptr<NetDevice> dev;
    };

    std::vector<SwitchPort> switchPorts;
};

Fabric g_fab;
uint32_t g_base = 0; // 10.0.0.0: link i is 10.0.0.0 + 4i /30; host h (link h) is + 4h + 1

uint32_t
AddNode(uint8_t layer, const std::string& name)
{
    Ptr<Node> n = CreateObject<Node>();
    g_fab.nodes.Add(n);
    g_fab.layer.push_back(layer);
    g_fab.names.push_back(name);
    g_fab.adj.emplace_back();
    NS_ABORT_MSG_IF(n->GetId() != g_fab.layer.size() - 1, "node ids must follow dcsim's numbering");
    return n->GetId();
}

struct LinkBuilder
{
    uint32_t buffer, mark;
    Ipv4AddressHelper addr{"10.0.0.0", "255.255.255.252"};
    uint32_t links = 0;

    void Connect(uint32_t a, uint32_t b, double gbps, const std::string& delay)
    {
        PointToPointHelper p2p = MakeLink(gbps, delay);
        Ptr<Node> na = g_fab.nodes.Get(a), nb = g_fab.nodes.Get(b);
        NetDeviceContainer d = p2p.Install(na, nb);
        for (uint32_t side = 0; side < 2; side++)
        {
            uint32_t node = side ? b : a;
            if (g_fab.layer[node] == 0)
            {
                InstallHostQdisc(d.Get(side));
            }
            else
            {
                InstallSwitchQdisc(d.Get(side), buffer, SwitchAqm{.k = mark}, gbps);
            }
        }
        Ipv4InterfaceContainer ifs = addr.Assign(d);
        addr.NewNetwork();
        NS_ABORT_MSG_IF(ifs.GetAddress(0).Get() != g_base + 4 * links + 1, "unexpected address plan");
        links++;
        uint32_t ia = na->GetObject<Ipv4>()->GetInterfaceForDevice(d.Get(0));
        uint32_t ib = nb->GetObject<Ipv4>()->GetInterfaceForDevice(d.Get(1));
        g_fab.adj[a].emplace_back(b, ia);
        g_fab.adj[b].emplace_back(a, ib);
        for (uint32_t side = 0; side < 2; side++)
        {
            uint32_t node = side ? b : a, peer = side ? a : b, iface = side ? ib : ia;
            if (g_fab.layer[node] > 0)
            {
                g_fab.switchPorts.push_back({node, iface, peer, d.Get(side)});
            }
        }
    }
};

// A link to make: (node a, node b, nominal Gb/s, delay).
struct LinkSpec
{
    uint32_t a, b;
    double gbps;
    std::string delay;
};

// Creates the fat-tree's nodes in dcsim's order; returns its links in dcsim's order.
std::vector<LinkSpec>
FatTree(uint32_t k, double gbps, const std::string& hostDelay, const std::string& edgeAggDelay,
        const std::string& aggCoreDelay)
{
    NS_ABORT_MSG_IF(k < 2 || k % 2, "k must be even");
    uint32_t half = k / 2;
    g_fab.hosts = k * k * k / 4;
    for (uint32_t h = 0; h < g_fab.hosts; h++)
    {
        AddNode(0, "host" + std::to_string(h));
    }
    std::vector<uint32_t> edges, aggs, cores;
    for (uint32_t pod = 0; pod < k; pod++)
    {
        for (uint32_t i = 0; i < half; i++)
        {
            edges.push_back(AddNode(1, "edge" + std::to_string(pod) + "." + std::to_string(i)));
        }
        for (uint32_t i = 0; i < half; i++)
        {
            aggs.push_back(AddNode(2, "agg" + std::to_string(pod) + "." + std::to_string(i)));
        }
    }
    for (uint32_t i = 0; i < half * half; i++)
    {
        cores.push_back(AddNode(3, "core" + std::to_string(i)));
    }
    std::vector<LinkSpec> links;
    for (uint32_t h = 0; h < g_fab.hosts; h++)
    {
        links.push_back({h, edges[h / half], gbps, hostDelay});
    }
    for (uint32_t pod = 0; pod < k; pod++)
    {
        for (uint32_t e = 0; e < half; e++)
        {
            for (uint32_t a = 0; a < half; a++)
            {
                links.push_back({edges[pod * half + e], aggs[pod * half + a], gbps, edgeAggDelay});
            }
        }
        // Aggregation switch a of every pod connects to cores a*half .. a*half + half - 1.
        for (uint32_t a = 0; a < half; a++)
        {
            for (uint32_t c = 0; c < half; c++)
            {
                links.push_back({aggs[pod * half + a], cores[a * half + c], gbps, aggCoreDelay});
            }
        }
    }
    return links;
}

// Creates the leaf-spine's nodes in dcsim's order; returns its links in dcsim's order.
std::vector<LinkSpec>
LeafSpine(uint32_t leaves, uint32_t spines, uint32_t hostsPerLeaf, double hostGbps, double uplinkGbps,
          const std::string& hostDelay, const std::string& uplinkDelay)
{
    g_fab.hosts = leaves * hostsPerLeaf;
    for (uint32_t h = 0; h < g_fab.hosts; h++)
    {
        AddNode(0, "host" + std::to_string(h));
    }
    std::vector<uint32_t> leafIds, spineIds;
    for (uint32_t i = 0; i < leaves; i++)
    {
        leafIds.push_back(AddNode(1, "leaf" + std::to_string(i)));
    }
    for (uint32_t i = 0; i < spines; i++)
    {
        spineIds.push_back(AddNode(2, "spine" + std::to_string(i)));
    }
    std::vector<LinkSpec> links;
    for (uint32_t h = 0; h < g_fab.hosts; h++)
    {
        links.push_back({h, leafIds[h / hostsPerLeaf], hostGbps, hostDelay});
    }
    for (uint32_t l : leafIds)
    {
        for (uint32_t s : spineIds)
        {
            links.push_back({l, s, uplinkGbps, uplinkDelay});
        }
    }
    return links;
}

// Shortest paths by hop count from every switch to every host, hosts not
// forwarding (one breadth-first search per destination, as dcsim).
void
ComputeFib()
{
    uint32_t n = g_fab.nodes.GetN(), H = g_fab.hosts;
    g_fab.fib.assign(size_t(n - H) * H, {0, 0});
    g_fab.fibIf.clear();
    std::vector<uint32_t> dist(n);
    std::vector<uint32_t> frontier;
    for (uint32_t dst = 0; dst < H; dst++)
    {
        std::fill(dist.begin(), dist.end(), UINT32_MAX);
        dist[dst] = 0;
        frontier.assign(1, dst);
        for (size_t i = 0; i < frontier.size(); i++)
        {
            uint32_t u = frontier[i];
            if (u != dst && g_fab.layer[u] == 0)
            {
                continue;
            }
            for (auto [v, iface] : g_fab.adj[u])
            {
                if (dist[v] == UINT32_MAX)
                {
                    dist[v] = dist[u] + 1;
                    frontier.push_back(v);
                }
            }
        }
        for (uint32_t s = H; s < n; s++)
        {
            uint32_t start = g_fab.fibIf.size();
            for (auto [v, iface] : g_fab.adj[s])
            {
                if (dist[s] != UINT32_MAX && dist[v] != UINT32_MAX && dist[v] + 1 == dist[s])
                {
                    g_fab.fibIf.push_back(iface);
                }
            }
            g_fab.fib[size_t(s - H) * H + dst] = {start, uint32_t(g_fab.fibIf.size()) - start};
        }
    }
    // One route object per (node, interface): forwarding reuses them.
    g_fab.ifRoute.assign(n, {});
    for (uint32_t u = 0; u < n; u++)
    {
        Ptr<Ipv4> ip = g_fab.nodes.Get(u)->GetObject<Ipv4>();
        g_fab.ifRoute[u].resize(ip->GetNInterfaces());
        for (auto [v, iface] : g_fab.adj[u])
        {
            Ptr<Ipv4> peer = g_fab.nodes.Get(v)->GetObject<Ipv4>();
            Ptr<NetDevice> dev = ip->GetNetDevice(iface);
            Ptr<NetDevice> peerDev = DynamicCast<PointToPointNetDevice>(dev)->GetChannel()->GetDevice(0);
            if (peerDev == dev)
            {
                peerDev = dev->GetChannel()->GetDevice(1);
            }
            Ptr<Ipv4Route> r = Create<Ipv4Route>();
            r->SetSource(ip->GetAddress(iface, 0).GetLocal());
            r->SetGateway(peer->GetAddress(peer->GetInterfaceForDevice(peerDev), 0).GetLocal());
            r->SetOutputDevice(dev);
            g_fab.ifRoute[u][iface] = r;
        }
    }
}

// The host a destination address belongs to, or UINT32_MAX.
inline uint32_t
HostOf(Ipv4Address a)
{
    uint32_t off = a.Get() - g_base;
    if (off % 4 != 1)
    {
        return UINT32_MAX;
    }
    uint32_t h = off / 4;
    return h < g_fab.hosts ? h : UINT32_MAX;
}

// murmur3's 32-bit finaliser.
inline uint32_t
Mix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bU;
    h ^= h >> 13;
    h *= 0xc2b2ae35U;
    return h ^ (h >> 16);
}

// The 5-tuple of a packet whose IPv4 header has been removed (TCP/UDP: the
// ports are its first 4 bytes).
inline uint64_t
FiveTuple(Ptr<const Packet> p, const Ipv4Header& h, uint32_t* hash)
{
    uint8_t b[4] = {0, 0, 0, 0};
    if (p->GetSize() >= 4)
    {
        p->CopyData(b, 4);
    }
    uint32_t ports = (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | b[3];
    uint32_t src = h.GetSource().Get(), dst = h.GetDestination().Get();
    if (hash)
    {
        *hash = Mix32(Mix32(Mix32(src ^ 0x9e3779b9U) ^ dst) ^ ports ^ (uint32_t(h.GetProtocol()) << 24));
    }
    // Source host, destination host and ports identify a flow direction here.
    return (uint64_t(HostOf(h.GetSource()) & 0xffff) << 48) | (uint64_t(HostOf(h.GetDestination()) & 0xffff) << 32) | ports;
}

// --------------------------------------------------------------------------- per-flow ECMP

class FlowEcmpRouting : public Ipv4RoutingProtocol
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("dcsimval::FlowEcmpRouting")
                                .SetParent<Ipv4RoutingProtocol>()
                                .SetGroupName("Internet")
                                .AddConstructor<FlowEcmpRouting>();
        return tid;
    }

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet>, const Ipv4Header& header, Ptr<NetDevice>,
                               Socket::SocketErrno& err) override
    {
        // Only hosts originate packets; they have one interface (index 1).
        uint32_t node = m_ipv4->GetObject<Node>()->GetId();
        if (HostOf(header.GetDestination()) == UINT32_MAX || node >= g_fab.hosts)
        {
            err = Socket::ERROR_NOROUTETOHOST;
            return nullptr;
        }
        err = Socket::ERROR_NOTERROR;
        Ptr<Ipv4Route> nic = g_fab.ifRoute[node][1];
        Ptr<Ipv4Route> r = Create<Ipv4Route>();
        r->SetDestination(header.GetDestination());
        r->SetSource(nic->GetSource());
        r->SetGateway(nic->GetGateway());
        r->SetOutputDevice(nic->GetOutputDevice());
        return r;
    }

    bool RouteInput(Ptr<const Packet> p, const Ipv4Header& header, Ptr<const NetDevice> idev,
                    const UnicastForwardCallback& ucb, const MulticastForwardCallback&,
                    const LocalDeliverCallback& lcb, const ErrorCallback& ecb) override
    {
        uint32_t dst = HostOf(header.GetDestination());
        if (m_node < g_fab.hosts || dst == UINT32_MAX)
        {
            // A host, or not a host's address: local delivery or nothing.
            uint32_t iif = m_ipv4->GetInterfaceForDevice(idev);
            if (m_ipv4->IsDestinationAddress(header.GetDestination(), iif))
            {
                lcb(p, header, iif);
                return true;
            }
            return false;
        }
        auto [start, count] = g_fab.fib[size_t(m_node - g_fab.hosts) * g_fab.hosts + dst];
        if (count == 0)
        {
            ecb(p, header, Socket::ERROR_NOROUTETOHOST);
            return true;
        }
        uint32_t pick = 0;
        if (count > 1)
        {
            uint32_t hash;
            FiveTuple(p, header, &hash);
            pick = Mix32(hash ^ (m_node * 0x9E3779B9U)) % count;
        }
        ucb(g_fab.ifRoute[m_node][g_fab.fibIf[start + pick]], p, header);
        return true;
    }

    void NotifyInterfaceUp(uint32_t) override {}
    void NotifyInterfaceDown(uint32_t) override {}
    void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override {}

    void SetIpv4(Ptr<Ipv4> ipv4) override
    {
        m_ipv4 = ipv4;
    }

    void SetNode(uint32_t node)
    {
        m_node = node;
    }

    void PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit) const override
    {
        *stream->GetStream() << "FlowEcmpRouting on node " << m_node << "\n";
    }

  protected:
    void DoDispose() override
    {
        m_ipv4 = nullptr;
        Ipv4RoutingProtocol::DoDispose();
    }

  private:
    Ptr<Ipv4> m_ipv4;
    uint32_t m_node = 0;
};

class FlowEcmpHelper : public Ipv4RoutingHelper
{
  public:
    FlowEcmpHelper* Copy() const override
    {
        return new FlowEcmpHelper(*this);
    }

    Ptr<Ipv4RoutingProtocol> Create(Ptr<Node> node) const override
    {
        Ptr<FlowEcmpRouting> r = CreateObject<FlowEcmpRouting>();
        r->SetNode(node->GetId());
        return r;
    }
};

// --------------------------------------------------------------------------- flows

struct Flow
{
    uint32_t src, dst;
    uint64_t bytes;
    int64_t startPs;
    uint64_t got = 0;
    double fct = -1;
    uint64_t timeouts = 0, retx = 0;
    Ptr<BulkSendApplication> app;
};

std::vector<Flow> g_flows;
uint64_t g_completed = 0;

std::vector<Flow>
ReadFlows(const std::string& path, uint32_t hosts)
{
    std::ifstream in(path);
    NS_ABORT_MSG_IF(!in, "cannot read " << path);
    std::string line;
    std::getline(in, line);
    NS_ABORT_MSG_IF(line.rfind("src,dst,bytes,start_ps", 0) != 0,
                    "expected the header src,dst,bytes,start_ps in " << path);
    std::vector<Flow> out;
    while (std::getline(in, line))
    {
        if (line.empty())
        {
            continue;
        }
        Flow f{};
        char c1, c2, c3;
        std::istringstream s(line);
        s >> f.src >> c1 >> f.dst >> c2 >> f.bytes >> c3 >> f.startPs;
        NS_ABORT_MSG_IF(!s || c1 != ',' || c2 != ',' || c3 != ',', "bad flow line: " << line);
        NS_ABORT_MSG_IF(f.src >= hosts || f.dst >= hosts || f.src == f.dst || f.bytes == 0,
                        "bad flow: " << line);
        out.push_back(f);
    }
    return out;
}

void
OnSinkRx(uint32_t i, Ptr<const Packet> p, const Address&)
{
    Flow& f = g_flows[i];
    bool was = f.got >= f.bytes;
    f.got += p->GetSize();
    if (!was && f.got >= f.bytes)
    {
        f.fct = (Simulator::Now() - PicoSeconds(f.startPs)).GetSeconds();
        g_completed++;
    }
}

void
OnCongState(uint32_t i, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    g_flows[i].timeouts += now == TcpSocketState::CA_LOSS;
}

void
OnRetx(uint32_t i, Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
       Ptr<const TcpSocketBase>)
{
    g_flows[i].retx++;
}

// Runs 1 ps after the flow's BulkSend started (its socket exists from then on).
void
TraceSender(uint32_t i)
{
    Ptr<Socket> s = g_flows[i].app->GetSocket();
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, i));
    s->TraceConnectWithoutContext("Retransmission", MakeBoundCallback(&OnRetx, i));
}

// --------------------------------------------------------------------------- path check

// (switch node, egress interface) -> the 5-tuples forwarded there.
std::map<std::pair<uint32_t, uint32_t>, std::unordered_map<uint64_t, uint8_t>> g_portFlows;

void
OnForward(uint32_t node, const Ipv4Header& h, Ptr<const Packet> p, uint32_t iface)
{
    g_portFlows[{node, iface}][FiveTuple(p, h, nullptr)] = 1;
}

struct Spread
{
    double min = 1e300, max = 0, sum = 0, sumSq = 0;
    uint32_t n = 0, zero = 0;

    void Add(double x)
    {
        min = std::min(min, x);
        max = std::max(max, x);
        sum += x;
        sumSq += x * x;
        n++;
        zero += x == 0;
    }

    void Print(std::ostream& o) const
    {
        double mean = n ? sum / n : 0;
        double var = n ? std::max(0.0, sumSq / n - mean * mean) : 0;
        o << "{\"ports\":" << n << ",\"min\":" << (n ? min : 0) << ",\"mean\":" << mean
          << ",\"max\":" << max << ",\"cv\":" << (mean > 0 ? std::sqrt(var) / mean : 0)
          << ",\"unused\":" << zero << "}";
    }
};

} // namespace

int
main(int argc, char* argv[])
{
    Time::SetResolution(Time::PS);
    TcpSettings tcp;
    std::string topo = "fattree";
    uint32_t k = 8;
    uint32_t leaves = 9, spines = 4, hostsPerLeaf = 16;
    double gbps = 10, uplinkGbps = 40;
    std::string hostDelay = "1us", edgeAggDelay = "1us", aggCoreDelay = "1us", uplinkDelay = "10us";
    uint32_t buffer = 250;
    uint32_t mark = 65;
    std::string flowsPath;
    std::string duration = "50ms";
    std::string ecmp = "flow";
    bool checkPaths = false;
    CommandLine cmd;
    AddTcpArgs(cmd, tcp);
    cmd.AddValue("topo", "fattree or leafspine", topo);
    cmd.AddValue("k", "fat-tree arity (k^3/4 hosts)", k);
    cmd.AddValue("leaves", "leaf-spine: leaves", leaves);
    cmd.AddValue("spines", "leaf-spine: spines", spines);
    cmd.AddValue("hostsPerLeaf", "leaf-spine: hosts per leaf", hostsPerLeaf);
    cmd.AddValue("gbps", "fat-tree: every link; leaf-spine: host links (nominal Gb/s)", gbps);
    cmd.AddValue("uplinkGbps", "leaf-spine: leaf-spine links (nominal Gb/s)", uplinkGbps);
    cmd.AddValue("hostDelay", "propagation delay of host links", hostDelay);
    cmd.AddValue("edgeAggDelay", "fat-tree: edge-aggregation delay", edgeAggDelay);
    cmd.AddValue("aggCoreDelay", "fat-tree: aggregation-core delay", aggCoreDelay);
    cmd.AddValue("uplinkDelay", "leaf-spine: leaf-spine delay", uplinkDelay);
    cmd.AddValue("buffer", "switch egress buffer (packets, total)", buffer);
    cmd.AddValue("mark", "DCTCP marking threshold K (packets, total); 0 = drop-tail", mark);
    cmd.AddValue("flows", "CSV of flows: src,dst,bytes,start_ps", flowsPath);
    cmd.AddValue("duration", "simulated time", duration);
    cmd.AddValue("ecmp", "flow (per-flow hash, as dcsim) or random (ns-3 per-packet RandomEcmpRouting)", ecmp);
    cmd.AddValue("checkPaths", "record each forwarded packet's 5-tuple (slow; for checks)", checkPaths);
    cmd.Parse(argc, argv);
    NS_ABORT_MSG_IF(ecmp != "flow" && ecmp != "random", "--ecmp must be flow or random");
    NS_ABORT_MSG_IF(flowsPath.empty(), "--flows is required");
    ApplyTcpDefaults(tcp);
    g_base = Ipv4Address("10.0.0.0").Get();

    LinkBuilder lb{buffer, mark};
    InternetStackHelper stack;
    FlowEcmpHelper flowEcmp;
    if (ecmp == "flow")
    {
        stack.SetRoutingHelper(flowEcmp);
    }
    else
    {
        Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(true));
    }
    std::vector<LinkSpec> links;
    if (topo == "fattree")
    {
        links = FatTree(k, gbps, hostDelay, edgeAggDelay, aggCoreDelay);
    }
    else if (topo == "leafspine")
    {
        links = LeafSpine(leaves, spines, hostsPerLeaf, gbps, uplinkGbps, hostDelay, uplinkDelay);
    }
    else
    {
        NS_FATAL_ERROR("--topo must be fattree or leafspine");
    }
    stack.Install(g_fab.nodes);
    for (const auto& l : links)
    {
        lb.Connect(l.a, l.b, l.gbps, l.delay);
    }
    ComputeFib(); // also the per-interface routes the flow mode forwards with
    if (ecmp == "random")
    {
        Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    }
    for (uint32_t h = 0; h < g_fab.hosts; h++)
    {
        g_fab.hostAddr.push_back(Ipv4Address(g_base + 4 * h + 1));
    }

    // Flows: a sink per flow on its destination (its own port there), a
    // BulkSend per flow on its source.
    g_flows = ReadFlows(flowsPath, g_fab.hosts);
    std::vector<uint32_t> nextPort(g_fab.hosts, 10000);
    Time end(duration);
    for (uint32_t i = 0; i < g_flows.size(); i++)
    {
        Flow& f = g_flows[i];
        uint32_t port = nextPort[f.dst]++;
        NS_ABORT_MSG_IF(port > 65535, "too many flows to host " << f.dst);
        PacketSinkHelper sinkH("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sink = sinkH.Install(g_fab.nodes.Get(f.dst));
        sink.Start(Seconds(0));
        sink.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSinkRx, i));
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(g_fab.hostAddr[f.dst], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(f.bytes));
        bulk.SetAttribute("SendSize", UintegerValue(65536));
        ApplicationContainer src = bulk.Install(g_fab.nodes.Get(f.src));
        Time start = PicoSeconds(f.startPs);
        src.Start(start);
        f.app = DynamicCast<BulkSendApplication>(src.Get(0));
        if (start < end)
        {
            Simulator::Schedule(start + PicoSeconds(1), &TraceSender, i);
        }
    }

    if (checkPaths)
    {
        for (uint32_t s = g_fab.hosts; s < g_fab.nodes.GetN(); s++)
        {
            g_fab.nodes.Get(s)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
                "UnicastForward", MakeBoundCallback(&OnForward, s));
        }
    }

    Simulator::Stop(end);
    Simulator::Run();

    // Switch counters, and the packets each uplink layer sent.
    uint64_t drops = 0, devDrops = 0, marks = 0;
    std::map<uint8_t, Spread> upPackets, upFlows;
    for (const auto& sp : g_fab.switchPorts)
    {
        Ptr<QueueDisc> qd = RootQdisc(sp.dev);
        const auto& st = qd->GetStats();
        drops += st.nTotalDroppedPackets;
        marks += st.nTotalMarkedPackets;
        devDrops += DeviceDrops(sp.dev);
        if (g_fab.layer[sp.peer] > g_fab.layer[sp.node])
        {
            upPackets[g_fab.layer[sp.node]].Add(st.nTotalSentPackets);
            if (checkPaths)
            {
                auto it = g_portFlows.find({sp.node, sp.iface});
                upFlows[g_fab.layer[sp.node]].Add(it == g_portFlows.end() ? 0 : it->second.size());
            }
        }
    }
    // Flows (per switch) that left a switch on more than one interface.
    uint64_t multiPath = 0, tuples = 0;
    if (checkPaths)
    {
        // (switch, 5-tuple) -> mask of the egress interfaces it used (switches
        // have at most 64 interfaces here: k <= 64, spines+hosts per leaf <= 64).
        std::map<std::pair<uint32_t, uint64_t>, uint64_t> perSwitchTuple;
        for (const auto& [key, m] : g_portFlows)
        {
            for (const auto& [t, one] : m)
            {
                perSwitchTuple[{key.first, t}] |= uint64_t(1) << (key.second & 63);
            }
        }
        for (const auto& [k2, m] : perSwitchTuple)
        {
            tuples++;
            multiPath += __builtin_popcountll(m) > 1;
        }
    }

    uint64_t timeouts = 0, retx = 0, started = 0;
    for (const auto& f : g_flows)
    {
        timeouts += f.timeouts;
        retx += f.retx;
        started += PicoSeconds(f.startPs) < end;
    }
    std::cout << std::setprecision(12) << "{\"sim\":\"ns-3.44\",\"topo\":\"" << topo << "\",\"ecmp\":\""
              << ecmp << "\",\"hosts\":" << g_fab.hosts << ",\"switches\":" << g_fab.nodes.GetN() - g_fab.hosts
              << ",\"events\":" << Simulator::GetEventCount() << ",\"flows\":" << g_flows.size()
              << ",\"flows_started\":" << started << ",\"flows_completed\":" << g_completed
              << ",\"timeouts\":" << timeouts << ",\"retransmits\":" << retx << ",\"drops\":" << drops
              << ",\"device_drops\":" << devDrops << ",\"ecn_marks\":" << marks << ",\"uplink_packets\":{";
    bool first = true;
    for (const auto& [layer, s] : upPackets)
    {
        std::cout << (first ? "" : ",") << "\"" << int(layer) << "\":";
        s.Print(std::cout);
        first = false;
    }
    std::cout << "}";
    if (checkPaths)
    {
        std::cout << ",\"uplink_flows\":{";
        first = true;
        for (const auto& [layer, s] : upFlows)
        {
            std::cout << (first ? "" : ",") << "\"" << int(layer) << "\":";
            s.Print(std::cout);
            first = false;
        }
        std::cout << "},\"switch_flow_pairs\":" << tuples << ",\"multi_path_pairs\":" << multiPath;
    }
    std::cout << ",\"fct\":[";
    for (size_t i = 0; i < g_flows.size(); i++)
    {
        std::cout << (i ? "," : "");
        if (g_flows[i].fct < 0)
        {
            std::cout << "null";
        }
        else
        {
            std::cout << g_flows[i].fct;
        }
    }
    std::cout << "],\"flow_timeouts\":[";
    for (size_t i = 0; i < g_flows.size(); i++)
    {
        std::cout << (i ? "," : "") << g_flows[i].timeouts;
    }
    std::cout << "]}" << std::endl;
    Simulator::Destroy();
    return 0;
}
