"""Regenerate the catalogue of bad scenarios: writes each case and records the
error text dcsim gives today as its first line. Review the diff before
committing: a changed message must be a deliberate improvement, never an
accident (run from the repository root: python tests/bad_scenarios/make_catalogue.py)."""
import subprocess, sys, os
os.chdir(os.path.dirname(os.path.abspath(__file__)))
BASE = '''[topology]
type = "star"
hosts = 4
link_rate = "10Gbps"
link_delay = "2us"

[[workload]]
type = "bulk"
src = 1
dst = 0
size = "100KB"
'''
INC = '''[topology]
type = "star"
hosts = 4
link_rate = "10Gbps"
link_delay = "2us"

[[workload]]
type = "incast"
querier = 0
responders = [1, 2, 3]
response_size = "64KB"
'''
DB = '''[topology]
type = "dumbbell"
senders = 2
receivers = 1
access_rate = "10Gbps"
access_delay = "2us"
bottleneck_rate = "10Gbps"
bottleneck_delay = "2us"

[[workload]]
type = "bulk"
src = [0, 1]
dst = 2
size = "100KB"
'''
NOW = BASE.split("[[workload]]")[0]
def rep(base, a, b):
    assert a in base, a
    return base.replace(a, b)
cases = {
 "unknown_top_level_key": BASE + "\n[bogus]\nx = 1\n",
 "unknown_tcp_key": BASE + "\n[tcp]\nmss_bytes = 1460\n",
 "misspelled_key_in_workload": rep(BASE, 'size = "100KB"', 'sizes = "100KB"'),
 "unknown_topology_type": rep(BASE, 'type = "star"', 'type = "torus"'),
 "topology_type_not_a_string": rep(BASE, 'type = "star"', 'type = 3'),
 "missing_topology": "[[workload]]" + BASE.split("[[workload]]")[1],
 "missing_link_rate": rep(BASE, 'link_rate = "10Gbps"\n', ''),
 "rate_without_unit": rep(BASE, '"10Gbps"', '"10"'),
 "rate_as_number": rep(BASE, '"10Gbps"', '10'),
 "rate_unknown_unit": rep(BASE, '"10Gbps"', '"10Gbit"'),
 "zero_rate": rep(BASE, '"10Gbps"', '"0Gbps"'),
 "negative_rate": rep(BASE, '"10Gbps"', '"-10Gbps"'),
 "rate_overflows": rep(BASE, '"10Gbps"', '"99999999999999999999Tbps"'),
 "delay_without_unit": rep(BASE, '"2us"', '"2"'),
 "negative_delay": rep(BASE, '"2us"', '"-2us"'),
 "fractional_picoseconds": rep(BASE, '"2us"', '"1.5ps"'),
 "delay_overflows_time": rep(BASE, '"2us"', '"300000000s"'),
 "duration_overflows_time": "[run]\nduration = \"20000000s\"\n" + BASE,
 "duration_in_scientific_notation": "[run]\nduration = \"1e3s\"\n" + BASE,
 "zero_duration": "[run]\nduration = \"0s\"\n" + BASE,
 "negative_flow_size": rep(BASE, '"100KB"', '"-100KB"'),
 "zero_flow_size": rep(BASE, '"100KB"', '"0B"'),
 "flow_size_unknown_unit": rep(BASE, '"100KB"', '"100 parsecs"'),
 "flow_size_as_number": rep(BASE, '"100KB"', '100000'),
 "flow_size_overflows": rep(BASE, '"100KB"', '"99999999999GiB"'),
 "host_out_of_range": rep(BASE, 'dst = 0', 'dst = 4'),
 "negative_host": rep(BASE, 'dst = 0', 'dst = -1'),
 "host_range_inverted": rep(BASE, 'src = 1', 'src = "3..1"'),
 "flow_to_itself": rep(BASE, 'dst = 0', 'dst = 1'),
 "zip_length_mismatch": rep(BASE, 'src = 1\ndst = 0', 'src = [1, 2]\ndst = [0]\npairing = "zip"'),
 "empty_source_set": rep(BASE, 'src = 1', 'src = []'),
 "star_of_one_host": rep(BASE, 'hosts = 4', 'hosts = 1'),
 "star_of_zero_hosts": rep(BASE, 'hosts = 4', 'hosts = 0'),
 "too_many_hosts": rep(BASE, 'hosts = 4', 'hosts = 1000000'),
 "hosts_negative": rep(BASE, 'hosts = 4', 'hosts = -4'),
 "dumbbell_without_receivers": rep(DB, 'receivers = 1', 'receivers = 0'),
 "dumbbell_with_star_keys": rep(DB, 'senders = 2', 'hosts = 2\nsenders = 2'),
 "buffer_below_one_frame": BASE + '\n[switch]\nbuffer = "1000B"\n',
 "buffer_zero_packets": BASE + '\n[switch]\nbuffer = "0pkt"\n',
 "buffer_without_unit": BASE + '\n[switch]\nbuffer = "100"\n',
 "jumbo_frame_vs_small_buffer": BASE + '\n[link]\nmtu = 9000\n[switch]\nbuffer = "4000B"\n',
 "nic_buffer_bad_word": BASE + '\n[host]\nnic_buffer = "infinite"\n',
 "voq_ingress_below_one_frame": BASE + '\n[switch]\nvoq = { ingress_cells = 5 }\n',
 "voq_with_scheduler": BASE + '\n[switch]\nvoq = { ingress_cells = 199 }\nscheduler = { type = "dwrr", quanta = ["1500B"] }\n',
 "voq_unknown_admission": BASE + '\n[switch]\nvoq = { ingress_cells = 199, admission = "magic" }\n',
 "arrear_without_timestamps": BASE + '\n[tcp]\ntimestamps = false\narrear = { clock = "1ns" }\n',
 "arrear_clock_unknown": BASE + '\n[tcp]\narrear = { clock = "fast" }\n',
 "arrear_syn_data_too_large": BASE + '\n[tcp]\narrear = { syn_data = "1500B" }\n',
 "tsq_zero": BASE + '\n[host]\ntsq = "0B"\n',
 "mtu_too_small": BASE + '\n[link]\nmtu = 100\n',
 "mtu_too_large": BASE + '\n[link]\nmtu = 65000\n',
 "loss_rate_one": BASE + '\n[link]\nloss_rate = 1.0\n',
 "dctcp_k_without_unit": BASE + '\n[switch]\naqm = { type = "dctcp", k = "65" }\n',
 "dctcp_k_zero": BASE + '\n[switch]\naqm = { type = "dctcp", k = "0pkt" }\n',
 "unknown_aqm": BASE + '\n[switch]\naqm = { type = "pie" }\n',
 "aqm_without_type": BASE + '\n[switch]\naqm = { k = "65pkt" }\n',
 "red_thresholds_inverted": BASE + '\n[switch]\naqm = { type = "red", min_th = "30pkt", max_th = "10pkt" }\n',
 "red_mixed_units": BASE + '\n[switch]\naqm = { type = "red", min_th = "30pkt", max_th = "100KB" }\n',
 "red_max_p_above_one": BASE + '\n[switch]\naqm = { type = "red", min_th = "5pkt", max_th = "15pkt", max_p = 1.5 }\n',
 "red_unknown_action": BASE + '\n[switch]\naqm = { type = "red", min_th = "5pkt", max_th = "15pkt", action = "shout" }\n',
 "unknown_congestion_control": BASE + '\n[tcp]\ncc = "bbr"\n',
 "swift_without_sack": BASE + '\n[tcp]\ncc = "swift"\nsack = false\n',
 "swift_max_mdf_out_of_range": BASE + '\n[tcp]\ncc = "swift"\n[tcp.swift]\nmax_mdf = 1.0\n',
 "swift_unknown_key": BASE + '\n[tcp]\ncc = "swift"\n[tcp.swift]\ntarget = "20us"\n',
 "ndp_zero_iw": BASE + '\n[ndp]\niw = 0\n',
 "ndp_payload_over_the_mtu": BASE + '\n[ndp]\npayload = "9000B"\n',
 "ndp_with_an_incast_workload": INC + '\n[ndp]\n',
 "homa_without_sched_priorities": BASE + '\n[homa]\n',
 "homa_every_level_scheduled": BASE + '\n[homa]\nsched_priorities = 8\n',
 "homa_overcommit_above_sched_levels": BASE + '\n[homa]\nsched_priorities = 2\novercommit = 3\n',
 "homa_auto_cutoffs_without_poisson": BASE + '\n[homa]\nsched_priorities = 4\n',
 "homa_with_ndp": BASE + '\n[homa]\nsched_priorities = 7\n[ndp]\n',
 "trim_without_a_class_buffer": BASE + '\n[switch.scheduler]\ntype = "strict_priority"\nclasses = 2\nfull = "trim"\n',
 "initial_cwnd_zero": BASE + '\n[tcp]\ninitial_cwnd = 0\n',
 "min_rto_above_max_rto": BASE + '\n[tcp]\nmin_rto = "2s"\nmax_rto = "1s"\n',
 "zero_rtt_granularity": BASE + '\n[tcp]\nrtt_granularity = "0s"\n',
 "dctcp_gain_above_one": BASE + '\n[tcp]\ndctcp_g = 2.0\n',
 "mss_above_mtu": BASE + '\n[tcp]\nmss = "2000B"\n',
 "rcv_buffer_too_big_without_scaling": BASE + '\n[tcp]\nwindow_scale = false\nrcv_buffer = "1MiB"\n',
 "delayed_ack_count_zero": BASE + '\n[tcp]\ndelayed_ack = { enabled = true, count = 0 }\n',
 "sack_not_a_bool": BASE + '\n[tcp]\nsack = "yes"\n',
 "infinite_flow_without_duration": rep(BASE, '"100KB"', '"inf"'),
 "no_workload_no_duration": NOW,
 "unknown_workload_type": rep(BASE, 'type = "bulk"', 'type = "storm"'),
 "workload_not_an_array": rep(BASE, '[[workload]]', '[workload]'),
 "querier_is_responder": rep(INC, 'responders = [1, 2, 3]', 'responders = [0, 1]'),
 "duplicate_responder": rep(INC, 'responders = [1, 2, 3]', 'responders = [1, 2, 2]'),
 "no_responders": rep(INC, 'responders = [1, 2, 3]', 'responders = []'),
 "zero_rounds": INC + 'rounds = 0\n',
 "zero_query_size": INC + 'query_size = "0B"\n',
 "too_many_parallel_connections": INC + 'connections_per_responder = 1000\n',
 "response_too_small_to_split": rep(INC, '"64KB"', '"2B"') + 'connections_per_responder = 4\n',
 "flows_entry_missing_size": NOW + '[[workload]]\ntype = "flows"\nflows = [{ src = 1, dst = 0 }]\n',
 "flows_entry_host_out_of_range": NOW + '[[workload]]\ntype = "flows"\nflows = [{ src = 1, dst = 0, size = "1KB" }, { src = 9, dst = 0, size = "1KB" }]\n',
 "flow_file_missing": NOW + '[[workload]]\ntype = "flows"\nfile = "does-not-exist.csv"\n',
 "flow_file_wrong_format": NOW + '[[workload]]\ntype = "flows"\nfile = "flows.json"\n',
 "flow_file_and_list": NOW + '[[workload]]\ntype = "flows"\nfile = "x.csv"\nflows = []\n',
 "flow_file_missing_column": NOW + '[[workload]]\ntype = "flows"\nfile = "missing_column.csv"\n',
 "flow_file_bad_number": NOW + '[[workload]]\ntype = "flows"\nfile = "bad_number.csv"\n',
 "pcap_without_point": BASE + '\n[[output.pcap]]\nname = "x"\n',
 "pcap_host_and_port": BASE + '\n[[output.pcap]]\nhost = 0\nport = 1\n',
 "pcap_port_out_of_range": BASE + '\n[[output.pcap]]\nport = 8\n',
 "pcap_duplicate_names": BASE + '\n[[output.pcap]]\nhost = 0\nname = "a"\n[[output.pcap]]\nhost = 1\nname = "a"\n',
 "pcap_bad_name": BASE + '\n[[output.pcap]]\nhost = 0\nname = "../etc/x"\n',
 "pcap_unknown_flow": BASE + '\n[[output.pcap]]\nhost = 0\nflow = 5\n',
 "pcap_snaplen_too_small": BASE + '\n[[output.pcap]]\nhost = 0\nsnaplen = 10\n',
 "negative_sample_interval": BASE + '\n[output]\nqueue_sample_interval = "-1us"\n',
 "unknown_sample_ports": BASE + '\n[output]\nqueue_sample_ports = "some"\n',
 "sample_port_out_of_range": BASE + '\n[output]\nqueue_sample_ports = [1, 99]\n',
 "sample_stop_before_start": BASE + '\n[output]\nqueue_sample_start = "2ms"\nqueue_sample_stop = "1ms"\n',
 "seed_negative": "[run]\nseed = -1\n" + BASE,
 "not_toml": "this is [not toml\n",
 "phantom_queue_drain_above_line_rate": BASE + '\n[switch.phantom_queue]\ndrain = 1.5\n',
 "phantom_queue_drain_not_a_rate": BASE + '\n[switch.phantom_queue]\ndrain = true\n',
 "phantom_queue_without_drain": BASE + '\n[switch.phantom_queue]\nthreshold = "1KB"\n',
 "phantom_queue_unknown_placement": BASE + '\n[switch.phantom_queue]\ndrain = 0.95\nplacement = "middle"\n',
 "pacer_unknown_type": BASE + '\n[host.pacer]\ntype = "leaky"\n',
 "pacer_p_assoc_above_one": BASE + '\n[host.pacer]\ntype = "hull"\np_assoc = 2\n',
 "pacer_zero_rate_interval": BASE + '\n[host.pacer]\ntype = "hull"\nrate_interval = "0s"\n',
 "hscc_thresholds_inverted": BASE + '\n[switch.hscc]\nlow = 0.6\nhigh = 0.5\n',
 "hscc_unknown_window": BASE + '\n[switch.hscc]\nwindow = "half"\n',
 "hscc_control_reserve_too_large": BASE + '\n[switch.hscc]\ncontrol_reserve = 0.7\n',
 "pacer_queue_below_one_frame": BASE + '\n[host.pacer]\ntype = "hull"\nqueue = "100B"\n',
 "scheduler_unknown_type": BASE + '\n[switch.scheduler]\ntype = "fair"\n',
 "scheduler_zero_classes": BASE + '\n[switch.scheduler]\ntype = "strict_priority"\nclasses = 0\n',
 "scheduler_unknown_full_policy": BASE + '\n[switch.scheduler]\ntype = "strict_priority"\nfull = "drop_random"\n',
 "pias_thresholds_not_increasing": BASE + '\n[host.pias]\nthresholds = ["100KB", "50KB"]\n',
 "pias_no_thresholds": BASE + '\n[host.pias]\nthresholds = []\n',
 "requests_count_with_poisson_arrivals": BASE.replace('type = "bulk"\nsrc = 1\ndst = 0\nsize = "100KB"', 'type = "requests"\nclient = 0\nservers = "1..4"\nresponse = "10KB"\narrival = "poisson"\nload = 0.5\ncount = 10'),
 "requests_zero_count": BASE.replace('type = "bulk"\nsrc = 1\ndst = 0\nsize = "100KB"', 'type = "requests"\nclient = 0\nservers = "1..4"\nresponse = "10KB"\narrival = "closed_loop"\ncount = 0'),
 "ecn_sharp_zero_interval": BASE + '\n[switch.aqm]\ntype = "ecn_sharp"\ninterval = "0s"\n',
 "codel_unknown_action": BASE + '\n[switch.aqm]\ntype = "codel"\naction = "shout"\n',
 "dwrr_zero_quantum": BASE + '\n[switch.scheduler]\ntype = "dwrr"\nquanta = ["1500B", "0B"]\n',
 "dwrr_priorities_length": BASE + '\n[switch.scheduler]\ntype = "dwrr"\nquanta = ["1500B", "1500B"]\npriorities = [0]\n',
 "bulk_dscp_too_large": BASE.replace('size = "100KB"', 'size = "100KB"\ndscp = 64'),
 "voq_too_many_ports": rep(BASE, 'hosts = 4', 'hosts = 65536') + '\n[switch]\nvoq = { ingress_cells = 199 }\n',
 "size_cdf_not_a_name": BASE.replace('type = "bulk"\nsrc = 1\ndst = 0\nsize = "100KB"', 'type = "poisson"\nsize = { cdf = ["websearch"] }\nload = 0.3\npattern = "all_to_all"'),
 "size_cdf_file_not_a_path": BASE.replace('type = "bulk"\nsrc = 1\ndst = 0\nsize = "100KB"', 'type = "poisson"\nsize = { cdf_file = 3 }\nload = 0.3\npattern = "all_to_all"'),
 "search_server_load_too_many_queries": '[run]\nduration = "1ms"\n\n' + BASE.replace('type = "bulk"\nsrc = 1\ndst = 0\nsize = "100KB"', 'type = "search"\nclient = 0\nservers = "1..4"\nquery_size = "100B"\nresponse_size = "100B"\nservice_time = { type = "constant", value = "1ps" }\nserver_load = 0.5'),
 "flow_file_empty_flows": NOW + '[[workload]]\ntype = "flows"\nfile = "empty_flows.csv"\n',
 "flow_file_nan_start": NOW + '[[workload]]\ntype = "flows"\nfile = "nan_start.csv"\n',
 "run_is_an_array": "run = []\n\n" + BASE,
 "run_is_an_array_of_values": "run = [7]\n\n" + BASE,
 "poisson_unknown_connections": BASE.replace('type = "bulk"\nsrc = 1\ndst = 0\nsize = "100KB"', 'type = "poisson"\nload = 0.5\nload_reference = "host"\npattern = "all_to_all"\nsize = "10KB"\nconnections = "pooled"'),
}
open("missing_column.csv","w").write("src,dst,bytes\n1,0,1000\n")
open("bad_number.csv","w").write("src,dst,bytes,start\n1,0,lots,0\n")
open("empty_flows.csv","w").write("src,dst,bytes,start\n")
open("nan_start.csv","w").write("src,dst,bytes,start\n1,0,1000,nan\n")
here = os.getcwd()
for name, text in cases.items():
    path = f"{name}.toml"
    open(path, "w").write(text)
    p = subprocess.run([sys.executable, "-m", "dcsim.cli", "validate", path], capture_output=True, text=True)
    assert p.returncode == 2, (name, p.returncode, p.stderr)
    err = p.stderr.strip()
    assert err.startswith("dcsim: error: ") and "\n" not in err, (name, err)
    msg = err[len("dcsim: error: "):].replace(here, "{dir}")
    open(path, "w").write(f"# error: {msg}\n" + text)
    print(f"{name}: {msg[:160]}")
print(len(cases))
with open("not_toml.toml") as f:
    text = f.read()
with open("not_toml.toml", "w") as f:  # the header line shifts the reported line by one
    f.write(text.replace("at line 1, column 6", "at line 2, column 6", 1))
