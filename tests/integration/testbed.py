"""A test bed of hosts on one machine, for the tests that launch across nodes.

Each host is a network namespace with its own address on a bridge, and a command runs on a host
through netns-agent (the launcher agent that Open MPI's plm_rsh_agent and MPICH's -launcher-exec
are pointed at), which also gives it the host's name. The bridge lives in a namespace of its own,
so nothing is attached to the root namespace: none of the machine's links, addresses, routes or
firewall rules change. The addresses (SUBNET, a private range) exist only inside the test bed,
which has no route out, and the tests target no other address.

stop() kills every process left in the bed's namespaces and deletes them, also after a failed
start; start() first removes what a killed earlier run left behind (namespaces named for a
process that no longer exists). Needs root, iproute2 and util-linux (nsenter, unshare); where
they are missing the tests skip, and with XFER_EXPECT_TESTBED=1 (tools/test as root) they fail.

shape() gives the hosts' links rates, and a pair of hosts a lower one, with tc's htb (netem, for
delays, is not in every kernel: this VM's has none); unshape() takes them off.

Two switches (Testbed(hosts, switches=2)): the first half of the hosts on bridge br0, the second
on br1, the two bridges joined by one veth pair, the uplink (its ends uplink0 on br0, uplink1 on
br1), which shape(uplink_rate=) slows: every pair across the switches shares it, as pairs share
a spine link of an oversubscribed fabric. Both bridges live in the one switch namespace, so that
every host's port stays where one switch had it (link_down(), bridge_bytes(), shape() and the
Slurm cluster find it there unchanged) and remove_leftovers() has nothing new to find; nothing
else joins them (the namespace has no addresses and routes nothing), so a frame between the
halves crosses the uplink. topology_conf() describes the bed as Slurm's topology.conf does.
"""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time

from xfer_testlib import cannot_run, programs

AGENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "netns-agent")
SUBNET = "10.217.0.0/24"  # host i (from 0) is 10.217.0.<i + 1>
# Open MPI on the bed, however launched: TCP between hosts and shared memory within one, both
# pinned to the bed's subnet. Every host is the same 2 cores, so a rank that waits yields them:
# spinning, a message waits for the next scheduler tick (4 ms here).
OPENMPI_MCA = {
    "btl": "self,tcp,vader",
    "btl_tcp_if_include": SUBNET,
    "oob_tcp_if_include": SUBNET,
    "mpi_yield_when_idle": "1",
}
FIRST_ROW_TIMEOUT = 60  # seconds from launch to the first finished row, before a fault
LINK_UP_TIMEOUT = 10  # seconds a cable plugged back in may take to carry again
TOOLS_PATH = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"  # where root's tools are
# shape(): every htb class has one burst and cburst, 64 KiB: one GSO packet (a veth passes TCP
# segments of up to 64 KiB whole). Measured from 100 to 2000 Mbit/s, with 1 MiB messages: 16 KiB
# keeps 1 Gbit/s to 0.90 of its rate; 256 KiB lets a message start with that much at once, and
# a 1 MiB message then goes 1.25 times the rate at 400 Mbit/s. One size for all the classes keeps
# the ratios of their rates. The quantum, what a class sends per turn when classes share a link,
# is one such packet too (htb's default, rate / 10, is above its own cap of 200000 from 16 Mbit/s).
SHAPE_BURST = 64 * 1024
SHAPE_QUANTUM = 64 * 1024
UPLINK = ("uplink0", "uplink1")  # the two switches' ends of the veth that joins them
# Our namespaces, xfertb-<owner pid>.<owner start time>-<bed>-<host or "switch">, and folders.
_OURS = re.compile(r"^xfertb-(\d+)\.(\d+)-")
_beds_made = 0


def unavailable(reason):
    """What a multi-host test raises when the bed cannot be made here (skip, or fail in CI)."""
    return cannot_run("XFER_EXPECT_TESTBED", "the multi-host test bed", reason)


def require_open_mpi(mpirun):
    """unavailable() unless `mpirun` is Open MPI's (the bed's Open MPI settings need it)."""
    version = subprocess.run(
        [mpirun, "--version"], capture_output=True, text=True, timeout=60, check=False
    ).stdout
    if "Open MPI" not in version and "OpenRTE" not in version:
        raise unavailable(f"{mpirun} is not Open MPI's: {version.strip()[:80]}")


def _start_time(pid):
    """When process `pid` started, in clock ticks since boot ("" if it has ended, or ended and
    awaits its parent): with the pid, a name that no later process can have."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return "" if fields[0] == "Z" else fields[19]
    except (OSError, IndexError):
        return ""


def _ip(*args, check=True):
    proc = subprocess.run(
        ["ip", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"ip {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def _pids_in(namespace):
    return [int(p) for p in _ip("netns", "pids", namespace, check=False).split()]


def _signal_all(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _remove(namespaces):
    """Ends every process in `namespaces` (SIGTERM, then SIGKILL; bounded), then deletes them;
    their links, and the bridge, go with them."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            pids = [pid for ns in namespaces for pid in _pids_in(ns)]
            if not pids:
                break
            _signal_all(pids, sig)
            time.sleep(0.1)
    for ns in namespaces:
        _ip("netns", "delete", ns, check=False)


def _orphaned(name):
    """Whether `name` is one of our namespaces or folders, of a bed whose owner has gone."""
    m = _OURS.match(name)
    return bool(m) and _start_time(m.group(1)) != m.group(2)


def remove_leftovers():
    """Removes what beds whose owner has gone (a test run that was killed) left behind: their
    namespaces, and their folders in the temporary directory."""
    names = [line.split()[0] for line in _ip("netns", "list", check=False).splitlines() if line]
    _remove([n for n in names if _orphaned(n)])
    for name in filter(_orphaned, os.listdir(tempfile.gettempdir())):
        shutil.rmtree(os.path.join(tempfile.gettempdir(), name), ignore_errors=True)


class Testbed:
    """`hosts` hosts named nodeA, nodeB, ...; start() makes them, stop() removes them. With
    `switches`=2 the first half of them (the larger, for an odd count) is on switch 0 and the
    rest on switch 1, joined by the uplink."""

    def __init__(self, hosts, switches=1):
        programs(
            ("ip", "nsenter", "unshare", "mount", "hostname"),
            "iproute2 util-linux",
            unavailable,
            os.environ.get("PATH", "") + ":/usr/sbin:/sbin",
        )
        if os.geteuid() != 0:
            raise unavailable("a test bed of network namespaces needs root")
        global _beds_made
        _beds_made += 1
        pid = os.getpid()
        self.prefix = f"xfertb-{pid}.{_start_time(pid)}-{_beds_made}-"
        self.hosts = ["node" + chr(ord("A") + i) for i in range(hosts)]
        if switches not in (1, 2) or switches > hosts:
            raise ValueError(f"{switches} switches for {hosts} hosts: 1, or 2 for 2 or more")
        half = (hosts + 1) // 2 if switches == 2 else hosts
        # leaves[k]: the hosts on switch k (bridge br<k>), in order
        self.leaves = [self.hosts[:half], self.hosts[half:]][:switches]
        self.switch_of = {h: k for k, leaf in enumerate(self.leaves) for h in leaf}
        base = SUBNET.split("/")[0].rsplit(".", 1)[0]
        self.address = {h: f"{base}.{i + 1}" for i, h in enumerate(self.hosts)}
        self.switch = self.prefix + "switch"
        self._made = []
        self._tmp = None
        self.hosts_file = None

    def start(self):
        remove_leftovers()
        self._tmp = tempfile.TemporaryDirectory(prefix=self.prefix)
        try:
            self._namespace(self.switch)
            for k in range(len(self.leaves)):
                _ip("-n", self.switch, "link", "add", f"br{k}", "type", "bridge")
                _ip("-n", self.switch, "link", "set", f"br{k}", "up")
            if len(self.leaves) == 2:
                end0, end1 = UPLINK
                _ip("-n", self.switch, "link", "add", end0, "type", "veth", "peer", "name", end1)
                for k, end in enumerate(UPLINK):
                    _ip("-n", self.switch, "link", "set", end, "master", f"br{k}", "up")
            for host in self.hosts:
                self._add_host(host)
            self.hosts_file = os.path.join(self._tmp.name, "hosts")
            with open(self.hosts_file, "w", encoding="utf-8") as f:
                f.write("127.0.0.1 localhost\n")
                f.writelines(f"{self.address[h]} {h}\n" for h in self.hosts)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        """Idempotent; never raises for what is already gone."""
        _remove(list(reversed(self._made)))
        self._made = []
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    # --- using it ------------------------------------------------------------------------

    @property
    def agent_env(self):
        """What netns-agent needs to find the bed's hosts."""
        return {"XFER_NETNS_PREFIX": self.prefix, "XFER_NETNS_HOSTS": self.hosts_file}

    def env(self, base=None):
        """`base` (default: the test's environment) with agent_env."""
        return dict(os.environ if base is None else base, **self.agent_env)

    def topology_conf(self):
        """The bed as Slurm's topology.conf (topology/tree) describes it: a line a leaf switch,
        `SwitchName=sw<k> Nodes=nodeA,...`, and with two leaves a `SwitchName=spine
        Switches=sw0,sw1` above them (the uplink). For `tools/fleet --topology FILE`, and for a
        Slurm cluster on the bed."""
        lines = [f"SwitchName=sw{k} Nodes={','.join(leaf)}" for k, leaf in enumerate(self.leaves)]
        if len(self.leaves) > 1:
            lines.append(f"SwitchName=spine Switches={','.join(f'sw{k}' for k in range(2))}")
        return "\n".join(lines) + "\n"

    def write_topology(self, path):
        """Writes topology_conf() to `path`; returns `path`."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.topology_conf())
        return path

    def on(self, host, argv):
        """The command line that runs `argv` on `host`, as `ssh host ARGV` would."""
        return [AGENT, host, "exec " + shlex.join(argv)]  # exec: no shell left in between

    def run(self, host, argv, timeout, env=None):
        return subprocess.run(
            self.on(host, argv),
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env=self.env(env),
            check=False,
            stdin=subprocess.DEVNULL,
        )

    def run_and_break(self, host, launch, fault, bound, env=None):
        """Runs launch(OUT) on `host`, a launch writing --benchmark_out=OUT, in environment
        `env` (default: the test's); once OUT holds a finished row, calls fault() and waits at
        most `bound` seconds for the launch to end. Returns (exit status, stdout and stderr
        together, the result document, OUT). AssertionError if no row finished first, or if
        the launch did not end in time (it is killed then)."""
        with (
            tempfile.TemporaryDirectory() as tmp,
            tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log,
        ):
            out = os.path.join(tmp, "run.json")
            proc = subprocess.Popen(
                self.on(host, launch(out)),
                env=self.env(env),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

            def said():
                log.seek(0)
                return log.read()

            try:
                deadline = time.monotonic() + FIRST_ROW_TIMEOUT
                while not _has_a_row(out):
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise AssertionError(f"no row finished before the fault:\n{said()}")
                    time.sleep(0.05)
                fault()
                try:
                    proc.wait(timeout=bound)
                except subprocess.TimeoutExpired:
                    raise AssertionError(
                        f"still running {bound} s after the fault (a hang):\n{said()}"
                    ) from None
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            with open(out, encoding="utf-8") as f:
                return proc.returncode, said(), json.load(f), out

    def link_down(self, host):
        """Unplugs `host`: its port on the bridge goes down (its own side loses the carrier)."""
        _ip("-n", self.switch, "link", "set", host, "down")

    def link_up(self, host):
        """Plugs `host` back in, waits until both ends of its cable have the carrier, then makes
        every host forget the neighbours it failed to reach meanwhile: a FAILED entry makes the
        next connect() fail at once (EHOSTUNREACH), and the next launch with it."""
        _ip("-n", self.switch, "link", "set", host, "up")
        deadline = time.monotonic() + LINK_UP_TIMEOUT
        while not self._carrier(host):
            if time.monotonic() > deadline:
                raise AssertionError(f"{host}'s link had no carrier {LINK_UP_TIMEOUT} s after up")
            time.sleep(0.05)
        for h in self.hosts:
            _ip("-n", self.prefix + h, "neigh", "flush", "all", check=False)

    def shape(self, rate_mbit, host_rates=None, pair_rates=None, uplink_rate=None):
        """Shapes every host's link to `rate_mbit` Mbit/s, or host_rates[host], both ways: an htb
        on the host's eth0 (what it sends) and on its port of the bridge (what it receives).
        pair_rates {(a, b): Mbit/s} slows the traffic between a and b further, both ways, where
        each sends: a class at that rate on a's eth0 for the packets to b's address, and on b's
        for a's. What a host sends to all its peers together stays within its link's rate.
        uplink_rate (two switches only): the uplink at that many Mbit/s, both ways, an htb on
        each of its ends; the pairs across the switches share it, the pairs within one do not
        cross it. None leaves the uplink a veth's speed (several Gbit/s here).
        Replaces an earlier shape(); unavailable() where tc is missing or refuses."""
        tc = programs(("tc",), "iproute2", unavailable, TOOLS_PATH)["tc"]
        host_rates = host_rates or {}
        pair_rates = pair_rates or {}
        for a, b in pair_rates:
            if a not in self.address or b not in self.address or a == b:
                raise ValueError(f"no such pair of hosts: {a}, {b}")
        if uplink_rate is not None and len(self.leaves) < 2:
            raise ValueError("uplink_rate on a bed of one switch: it has no uplink")
        self.unshape()
        try:
            for host in self.hosts:
                rate = host_rates.get(host, rate_mbit)
                peers = {b: r for (a, b), r in pair_rates.items() if a == host}
                peers.update({a: r for (a, b), r in pair_rates.items() if b == host})
                self._htb(tc, self.prefix + host, "eth0", rate, peers)
                self._htb(tc, self.switch, host, rate, {})
            for end in UPLINK if uplink_rate is not None else ():
                self._htb(tc, self.switch, end, uplink_rate, {})
        except BaseException:
            self.unshape()
            raise

    def unshape(self):
        """Removes what shape() added; idempotent, never raises for what is already gone."""
        tc = shutil.which("tc", path=TOOLS_PATH)
        devices = [(self.prefix + h, "eth0") for h in self.hosts] + [
            (self.switch, h) for h in self.hosts
        ]
        devices += [(self.switch, end) for end in UPLINK] if len(self.leaves) > 1 else []
        for ns, dev in devices if tc else []:
            _run([tc, "-n", ns, "qdisc", "del", "dev", dev, "root"])

    def _htb(self, tc, ns, dev, rate_mbit, peers):
        """An htb on `dev` of `ns`: class 1:1, the link at `rate_mbit`, and under it the default
        class 1:10 and, for each {peer: Mbit/s} of `peers`, a class of that ceiling for the
        packets to the peer's address. Each class under 1:1 is assured an equal share of the link
        and borrows from 1:1 up to its ceiling, so that together they stay within the link."""

        def add(words, *more):
            proc = _run([tc, "-n", ns, *words.split(), *more])
            if proc.returncode != 0:
                raise unavailable(f"tc -n {ns} {words} failed: {proc.stderr.strip()}")

        add(f"qdisc add dev {dev} root handle 1: htb default 10")
        add(f"class add dev {dev} parent 1: classid 1:1 htb", *_htb_rates(rate_mbit, rate_mbit))
        classes = [(10, rate_mbit, None)]
        classes += [(11 + i, r, peer) for i, (peer, r) in enumerate(sorted(peers.items()))]
        share = rate_mbit / len(classes)
        for minor, ceil, peer in classes:
            add(
                f"class add dev {dev} parent 1:1 classid 1:{minor} htb",
                *_htb_rates(min(share, ceil), ceil),
            )
            if peer is not None:
                add(
                    f"filter add dev {dev} parent 1: protocol ip prio 1 u32"
                    f" match ip dst {self.address[peer]}/32 flowid 1:{minor}"
                )

    def _carrier(self, host):
        ends = (
            json.loads(_ip("-n", self.switch, "-j", "link", "show", host))[0],
            json.loads(_ip("-n", self.prefix + host, "-j", "link", "show", "eth0"))[0],
        )
        return all("LOWER_UP" in end.get("flags", []) for end in ends)

    def kill(self, host, program=None):
        """SIGKILL to the processes on `host` (only those running `program`, if given); returns
        how many there were."""
        pids = [p for p in _pids_in(self.prefix + host) if program is None or _comm(p) == program]
        _signal_all(pids, signal.SIGKILL)
        return len(pids)

    def bridge_bytes(self, host):
        """Bytes that have crossed `host`'s port on the bridge, both ways."""
        return self._port_bytes(host)

    def uplink_bytes(self):
        """Bytes that have crossed the uplink between the two switches, both ways (0 with one
        switch)."""
        return self._port_bytes(UPLINK[0]) if len(self.leaves) > 1 else 0

    def _port_bytes(self, port):
        link = json.loads(_ip("-n", self.switch, "-j", "-s", "link", "show", port))[0]
        return link["stats64"]["rx"]["bytes"] + link["stats64"]["tx"]["bytes"]

    # --- making it -----------------------------------------------------------------------

    def _namespace(self, name):
        proc = subprocess.run(
            ["ip", "netns", "add", name],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        if proc.returncode != 0:
            raise unavailable("cannot make a network namespace: " + proc.stderr.strip())
        self._made.append(name)
        # IPv4 only: no IPv6 link-local chatter on the bridge, one address per host to pin.
        subprocess.run(
            [
                "nsenter",
                "--net=/run/netns/" + name,
                "sh",
                "-c",
                "for k in all default; do echo 1 > /proc/sys/net/ipv6/conf/$k/disable_ipv6;"
                " done 2>/dev/null",
            ],
            timeout=30,
            check=False,
            stdin=subprocess.DEVNULL,
        )

    def _add_host(self, host):
        ns = self.prefix + host
        self._namespace(ns)
        # One cable: the host's eth0, plugged into the bridge's port named after the host.
        _ip(
            "-n",
            self.switch,
            "link",
            "add",
            host,
            "type",
            "veth",
            "peer",
            "name",
            "eth0",
            "netns",
            ns,
        )
        bridge = f"br{self.switch_of[host]}"
        _ip("-n", self.switch, "link", "set", host, "master", bridge, "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", ns, "addr", "add", self.address[host] + "/" + SUBNET.split("/")[1], "dev", "eth0")
        _ip("-n", ns, "link", "set", "eth0", "up")


def _run(argv):
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def _htb_rates(rate_mbit, ceil_mbit):
    """The rate, ceil, burst, cburst and quantum arguments of an htb class."""
    return (
        f"rate {round(rate_mbit * 1000)}kbit ceil {round(ceil_mbit * 1000)}kbit"
        f" burst {SHAPE_BURST} cburst {SHAPE_BURST} quantum {SHAPE_QUANTUM}"
    ).split()


def _comm(pid):
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return ""


def _has_a_row(path):
    try:
        with open(path, encoding="utf-8") as f:
            return any(b.get("run_type") == "iteration" for b in json.load(f)["benchmarks"])
    except (OSError, ValueError, KeyError):
        return False
