# Seed 002 (HSCC) Fig. 8's shape in stock ns-2.35: N long-lived FullTcp
# senders -> one receiver through one drop-tail port, with the TCP settings
# of the seed's framework (T-RACKs' spine_leaf.tcl: Agent/TCP/FullTcp/Newreno,
# no receive-window limit, an ACK per segment, a 1 us clock). Used by
# validation/ns2_dumbbell.py; see docs/reproduce.md, hscc-dumbbell.
#
# ns dumbbell.tcl SIM_S N BUFFER_PKTS RATE DELAY MIN_RTO START_SPREAD_S SEED INIT_CWND
# Prints one line per flow: "flow I goodput_gbps G timeouts T drops D".
lassign $argv simT N B rate delay minrto spread seed iw

Agent/TCP set tcpTick_ 0.000001
Agent/TCP set packetSize_ 1460
Agent/TCP set window_ 1000000
Agent/TCP set maxcwnd_ 1000000
Agent/TCP set windowInit_ $iw
Agent/TCP set minrto_ $minrto
Agent/TCP set rtxcur_init_ $minrto
Agent/TCP set maxrto_ 64
Agent/TCP/FullTcp set segsize_ 1460
Agent/TCP/FullTcp set segsperack_ 1
Agent/TCP/FullTcp set interval_ 0.0
Agent/TCP/FullTcp set nodelay_ true
Agent/TCP/FullTcp/Newreno set recov_maxburst_ 2

set ns [new Simulator]
$defaultRNG seed $seed
set left [$ns node]
set right [$ns node]
set rcv [$ns node]
# Host and receiver queues unlimited, as dcsim's NICs; the bottleneck holds B.
$ns duplex-link $left $right $rate $delay DropTail
$ns queue-limit $left $right $B
$ns duplex-link $right $rcv $rate $delay DropTail
$ns queue-limit $right $rcv 1000000
set start [new RandomVariable/Uniform]
$start set min_ 0
$start set max_ $spread
for {set i 0} {$i < $N} {incr i} {
  set h [$ns node]
  $ns duplex-link $h $left $rate $delay DropTail
  $ns queue-limit $h $left 1000000
  set tcp($i) [new Agent/TCP/FullTcp/Newreno]
  set sink($i) [new Agent/TCP/FullTcp/Newreno]
  $sink($i) listen
  $ns attach-agent $h $tcp($i)
  $ns attach-agent $rcv $sink($i)
  $tcp($i) set fid_ $i
  $ns connect $tcp($i) $sink($i)
  set ftp($i) [new Application/FTP]
  $ftp($i) attach-agent $tcp($i)
  $ns at [expr {$spread > 0 ? [$start value] : 0.0}] "$ftp($i) start"
}
set fmon [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $left $right] $fmon

# Goodput is the advance of the cumulative ACK over the whole run; drops are
# counted per flow at the bottleneck.
proc finish {} {
  global N tcp fmon simT
  set cl [$fmon classifier]
  for {set i 0} {$i < $N} {incr i} {
    set f [$cl lookup auto 0 0 $i]
    set drops [expr {$f == "" ? 0 : [$f set pdrops_]}]
    puts "flow $i goodput_gbps [expr {[$tcp($i) set ack_] * 8.0 / $simT / 1e9}] timeouts [$tcp($i) set nrexmit_] drops $drops"
  }
  exit 0
}
$ns at $simT "finish"
$ns run
