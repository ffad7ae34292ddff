"""A throwaway Slurm cluster, for the tests that launch through srun: one node on localhost
(SlurmCluster), or one node per host of a test bed of network namespaces (SlurmClusterOnTestbed,
see testbed.py), slurmctld on the first.

munged, slurmctld and slurmd run in the foreground as children of the test, as root, with every
file they touch (key, socket, state, spool, logs, pid files, the job's TMPDIR) in one temporary
directory: nothing in /etc/slurm, /etc/munge, /var or /run is used. The cluster needs
no systemd and no cgroups (proctrack/linuxproc, task/none, no accounting). Every command has a
timeout; stop() ends the jobs, then the daemons, and removes the directory, even after a failed
start, and the daemons also die with the test process if it is killed. The one munged serves
every node of a test bed: its socket is a file, which other network namespaces reach too.
"""

import ctypes
import os
import signal
import socket
import subprocess
import tempfile
import time

from xfer_testlib import cannot_run, programs

# Where Debian puts the daemons; a non-login root shell may not have sbin on PATH.
_SEARCH_PATH = os.pathsep.join(
    [os.environ.get("PATH", os.defpath), "/usr/local/sbin", "/usr/sbin", "/sbin"]
)
PROGRAMS = ("munged", "slurmctld", "slurmd", "srun", "sinfo", "scontrol", "squeue", "scancel")
START_TIMEOUT = 60  # seconds from the first daemon to an idle node
LOG_LINES = 30


def unavailable(reason):
    """What a Slurm test raises when it cannot run here (XFER_EXPECT_SLURM=1: a failure)."""
    return cannot_run("XFER_EXPECT_SLURM", "the Slurm test", reason)


def find_programs():
    """The paths of PROGRAMS, or raises unavailable() saying what is missing."""
    found = programs(PROGRAMS, "slurmctld slurmd slurm-client munge", unavailable, _SEARCH_PATH)
    if os.geteuid() != 0:
        raise unavailable("a local Slurm cluster needs root (slurmd starts the job's tasks)")
    return found


def _free_ports(count):
    """`count` distinct TCP ports free on localhost now (held open together while chosen)."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _die_with_parent():
    # prctl(PR_SET_PDEATHSIG, SIGTERM): a daemon outlives neither a killed test nor a ctest timeout.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _tail(path, lines=LOG_LINES):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read().splitlines()
    except OSError as error:
        return f"({error.strerror})"
    return "\n".join(text[-lines:]) or "(empty)"


def clean_env(extra=None):
    """The test's environment without an outer Slurm job's or MPI launcher's variables, which
    would make srun attach to that job or the ranks to that launcher."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLURM_", "SLURMD_", "PMIX_", "PMI_", "OMPI_COMM_WORLD_"))
        and not k.startswith(("OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix"))
    }
    env["PATH"] = _SEARCH_PATH
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.update(extra or {})
    return env


class SlurmCluster:
    """start() brings the nodes to idle or raises AssertionError with the daemons' logs."""

    def __init__(self):
        self.programs = find_programs()
        self._tmp = None
        self._daemons = []  # (name, Popen, log paths), in start order
        self.root = None
        self.nodes = []  # (name, address); the first also runs slurmctld and the client commands

    EXTRA_CONFIG = []  # more slurm.conf lines

    def _find_nodes(self):
        # slurmctld only runs on the host its SlurmctldHost names.
        return [(socket.gethostname().split(".")[0], "127.0.0.1")]

    def on(self, node, argv):
        """The command line that runs `argv` on `node`."""
        return list(argv)

    @property
    def node(self):
        return self.nodes[0][0]

    # --- life cycle ----------------------------------------------------------------------

    def start(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="xfer-slurm-")
        self.root = self._tmp.name
        try:
            self._write_config()
            self._start_munged()
            self._start_daemon(
                "slurmctld",
                self.on(self.node, [self.programs["slurmctld"], "-D", "-i", "-f", self.conf]),
                self.path("log", "slurmctld.log"),
            )
            for name, _ in self.nodes:
                self._start_daemon(
                    "slurmd-" + name,
                    self.on(name, [self.programs["slurmd"], "-D", "-f", self.conf, "-N", name]),
                    self.path("log", f"slurmd-{name}.log"),
                )
            self.wait_for_idle()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        """Cancels the jobs, stops slurmd, slurmctld and munged, removes the directory.
        Idempotent; never raises for a daemon that is already gone."""
        if self._tmp is None:
            return
        if len(self._daemons) == 2 + len(self.nodes) and all(
            p.poll() is None for _, p, _ in self._daemons
        ):
            self._end_jobs()
        for _, proc, _ in reversed(self._daemons):
            if proc.poll() is None:
                proc.terminate()
        for _, proc, _ in reversed(self._daemons):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)
        self._daemons = []
        self._tmp.cleanup()
        self._tmp = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # --- using it ------------------------------------------------------------------------

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    @property
    def conf(self):
        return self.path("slurm.conf")

    def env(self, extra=None):
        """Environment for Slurm's client commands and the job: our slurm.conf, the job's
        TMPDIR (Open MPI's session directory) in our directory."""
        return clean_env(
            dict({"SLURM_CONF": self.conf, "TMPDIR": self.path("jobtmp")}, **(extra or {}))
        )

    def command(self, name, args, timeout=30, env=None):
        """Slurm's client command `name` with `args`, on the first node."""
        return subprocess.run(
            self.on(self.node, [self.programs[name]] + list(args)),
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env=self.env(env),
            check=False,
            stdin=subprocess.DEVNULL,
            cwd=self.root,
        )

    def srun(self, args, timeout=120, env=None):
        """srun ARGS, with `diagnosis` (its status, output and the daemons' logs) for an
        assertion message. Over `timeout` the srun is killed and AssertionError says what it
        had printed; stop() cancels the job."""
        try:
            proc = self.command("srun", args, timeout=timeout, env=env)
        except subprocess.TimeoutExpired as timeout_expired:
            said = [
                out.decode(errors="replace") if isinstance(out, bytes) else out or ""
                for out in (timeout_expired.stdout, timeout_expired.stderr)
            ]
            raise AssertionError(
                f"srun did not end within {timeout} s\n--- stdout\n{said[0]}\n"
                f"--- stderr\n{said[1]}\n{self.logs()}"
            ) from None
        proc.diagnosis = (
            f"srun exit status {proc.returncode}\n--- stdout\n{proc.stdout}\n"
            f"--- stderr\n{proc.stderr}\n{self.logs()}"
        )
        return proc

    def require_pmix(self):
        """Raises unavailable() unless srun has the PMIx plugin, which Open MPI 4.1 needs to be
        started by srun."""
        proc = self.command("srun", ["--mpi=list"])  # srun writes the list to stderr
        plugins = proc.stdout + proc.stderr
        if "pmix" not in plugins:
            raise unavailable(
                "srun has no PMIx plugin (srun --mpi=list: " + " ".join(plugins.split()) + ")"
            )

    def logs(self):
        """The tail of every daemon's log, for an assertion message. slurmctld and slurmd in
        the foreground write their log to stderr as well; their log file also has what each
        job's slurmstepd said, their stderr what they said before the log file was open."""
        parts = []
        for name, _, paths in self._daemons:
            path = next((p for p in paths if os.path.exists(p) and os.path.getsize(p)), paths[-1])
            parts.append(f"--- {name}: {path} (last {LOG_LINES} lines)\n" + _tail(path))
        return "\n".join(parts)

    # --- start-up ------------------------------------------------------------------------

    def _write_config(self):
        # munged insists that every directory above its socket is searchable by all.
        os.chmod(self.root, 0o711)
        self.nodes = self._find_nodes()
        for name, mode in (
            ("munge", 0o700),
            ("run", 0o755),
            ("state", 0o700),
            ("spool", 0o755),
            ("log", 0o755),
            ("tmpfs", 0o1777),
            ("jobtmp", 0o1777),
        ):
            os.mkdir(self.path(name))
            os.chmod(self.path(name), mode)
        for name, _ in self.nodes:  # each node its own (%n: the node's name)
            for shared in ("spool", "tmpfs"):
                os.mkdir(self.path(shared, name))
                os.chmod(self.path(shared, name), os.stat(self.path(shared)).st_mode)
        key = os.open(self.path("munge", "munge.key"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(key, "wb") as f:
            f.write(os.urandom(1024))
        open(self.path("plugstack.conf"), "w", encoding="utf-8").close()

        # slurmd -C says what a node has (each node of a test bed has the whole machine).
        host, address = self.nodes[0]
        hardware = self._node_hardware()
        ctld_port, slurmd_port = _free_ports(2)
        d = self.path
        lines = (
            [
                "ClusterName=xfertest",
                f"SlurmctldHost={host}({address})",
                f"SlurmctldPort={ctld_port}",
                f"SlurmdPort={slurmd_port}",
                "SlurmUser=root",
                "SlurmdUser=root",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                f"AuthInfo=socket={d('run', 'munge.socket')}",
                f"StateSaveLocation={d('state')}",
                f"SlurmdSpoolDir={d('spool', '%n')}",
                f"SlurmctldPidFile={d('run', 'slurmctld.pid')}",
                f"SlurmdPidFile={d('run', 'slurmd-%n.pid')}",
                f"SlurmctldLogFile={d('log', 'slurmctld.log')}",
                f"SlurmdLogFile={d('log', 'slurmd-%n.log')}",
                "SlurmctldDebug=info",
                "SlurmdDebug=info",
                f"TmpFS={d('tmpfs', '%n')}",
                f"PlugStackConfig={d('plugstack.conf')}",
                "MailProg=/bin/true",
                # No systemd, no cgroups: plain process tracking, no binding, no accounting.
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "JobAcctGatherType=jobacct_gather/none",
                "AccountingStorageType=accounting_storage/none",
                "JobCompType=jobcomp/none",
                "SchedulerType=sched/builtin",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                "MpiDefault=none",
                "ReturnToService=2",
                "InactiveLimit=0",
                "KillWait=5",
            ]
            + self.EXTRA_CONFIG
            + [
                f"NodeName={name} NodeHostname={name} NodeAddr={addr} {hardware} State=UNKNOWN"
                for name, addr in self.nodes
            ]
            + ["PartitionName=xfer Nodes=ALL Default=YES MaxTime=10 State=UP"]
        )
        with open(self.conf, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")

    def _node_hardware(self):
        keep = ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore")
        try:
            proc = subprocess.run(
                [self.programs["slurmd"], "-C"],
                capture_output=True,
                text=True,
                timeout=30,
                env=clean_env(),
                stdin=subprocess.DEVNULL,
                check=False,
            )
            first = proc.stdout.splitlines()[0] if proc.stdout else ""
        except (subprocess.TimeoutExpired, OSError):
            first = ""
        fields = [f for f in first.split() if f.split("=")[0] in keep]
        return " ".join(fields) if fields else f"CPUs={os.cpu_count() or 1}"

    def _spawn(self, name, argv, logs, stdout_path):
        out = open(stdout_path, "wb")
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.env(),
                cwd=self.root,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        finally:
            out.close()
        self._daemons.append((name, proc, logs))
        return proc

    def _start_munged(self):
        socket_path = self.path("run", "munge.socket")
        out = self.path("log", "munged.out")
        self._spawn(
            "munged",
            [
                # --force: a directory above ours that others cannot search (a private TMPDIR) is
                # then a warning, not a refusal; only root talks to this munged.
                self.programs["munged"],
                "--foreground",
                "--force",
                "--socket=" + socket_path,
                "--key-file=" + self.path("munge", "munge.key"),
                "--pid-file=" + self.path("run", "munged.pid"),
                "--seed-file=" + self.path("munge", "munged.seed"),
                "--log-file=" + self.path("log", "munged.log"),
                "--num-threads=2",
            ],
            [out],
            out,
        )
        self._poll(lambda: os.path.exists(socket_path), 15, "munged to create its socket")

    def _start_daemon(self, name, argv, log):
        out = self.path("log", name + ".out")
        self._spawn(name, argv, [log, out], out)

    def _node_states(self):
        """What sinfo says of each node: "NODE state reason" lines, e.g. "nodeA idle none"."""
        proc = self.command("sinfo", ["-h", "-N", "-o", "%N %T %E"], timeout=10)
        return (proc.stdout.strip() or proc.stderr.strip()).splitlines()

    def wait_for_idle(self):
        last = [[]]

        def idle():
            last[0] = self._node_states()
            states = {line.split()[0]: line.split()[1:2] for line in last[0] if line.split()}
            return all(states.get(name) == ["idle"] for name, _ in self.nodes)

        self._poll(
            idle, START_TIMEOUT, "every node to become idle", lambda: f"sinfo says {last[0]!r}"
        )

    def _poll(self, ready, timeout, what, detail=lambda: ""):
        deadline = time.monotonic() + timeout
        while True:
            for name, proc, _ in self._daemons:
                if proc.poll() is not None:
                    raise AssertionError(
                        f"{name} exited with status {proc.returncode} while "
                        f"waiting for {what}\n{self.logs()}"
                    )
            try:
                if ready():
                    return
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"waited {timeout} s for {what} in vain; {detail()}\n{self.logs()}"
                )
            time.sleep(0.25)

    def _end_jobs(self):
        """Cancels every job and waits (bounded) until squeue is empty and every slurmstepd has
        gone: a step's slurmstepd is in a session of its own and keeps a socket in the spool
        directory (NODE_JOB.STEP) until it exits."""

        def ended():
            steps = [
                n
                for name, _ in self.nodes
                for n in os.listdir(self.path("spool", name))
                if n.startswith(name + "_")
            ]
            jobs = self.command("squeue", ["-h", "-o", "%i"], timeout=10).stdout.strip()
            return not steps and not jobs

        try:
            self.command("scancel", ["--full", "--user=root"], timeout=10)
            deadline = time.monotonic() + 30
            while not ended() and time.monotonic() < deadline:
                time.sleep(0.25)
        except (subprocess.TimeoutExpired, OSError):
            pass


def other_ranks_lines(proc):
    """The lines of an `srun --label` run printed by a rank other than 0 (srun's own lines have
    no "N: " prefix)."""
    return [
        line
        for stream in (proc.stdout, proc.stderr)
        for line in stream.splitlines()
        if line[:1].isdigit() and not line.startswith("0: ")
    ]


class SlurmClusterOnTestbed(SlurmCluster):
    """A node on every host of a started testbed.Testbed (nodeA, nodeB, ...); slurmctld and the
    client commands (srun, sinfo, ...) run on the first."""

    # A node whose link is down is declared DOWN within seconds (the default waits 5 minutes),
    # which ends its job steps: srun would otherwise wait for their tasks' exit messages.
    EXTRA_CONFIG = ["SlurmdTimeout=10", "MessageTimeout=5"]

    def __init__(self, bed):
        super().__init__()
        self.bed = bed

    def _find_nodes(self):
        return [(host, self.bed.address[host]) for host in self.bed.hosts]

    def on(self, node, argv):
        return self.bed.on(node, argv)

    def env(self, extra=None):
        return super().env(dict(self.bed.agent_env, **(extra or {})))
