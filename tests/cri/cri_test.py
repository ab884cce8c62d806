#!/usr/bin/python3
"""A Kubernetes CRI client that drives containerd's CRI plugin the way a
kubelet does, and checks what the runtime handler made of each call, from
inside the containers and from the host.

Run by tests/cri/run.sh, which sets up containerd, the images, the CNI
network and these variables:
  CRI_SOCK          containerd's socket
  CRI_GEN           where protoc wrote runtime_pb2.py (from runtime.proto)
  CRI_TEST_IMAGE    the busybox image; CRI_PAUSE_IMAGE the pause image
  CRI_STATE         containerd's state dir (bundles under
                    io.containerd.runtime.v2.task/k8s.io/ID)
  CRI_PODS_DIR      where pod log directories go
  CRI_BRIG_ROOT, CRI_RUNC_ROOT  the shim's Root option per handler (the
                    runtime's --root is ROOT/k8s.io)
  BRIG, CRI_RUNC    the runtime binaries; CRI_HANDLERS "brig runc"
  CRI_CGROUP_PARENT every pod's cgroup parent; CRI_BRIDGE the pod bridge
  CRI_CASES         optional regex: only the cases whose name matches

Prints one "ok - [HANDLER] case" or "not ok - [HANDLER] case" line per case
and handler (run.sh numbers them), with "# " lines of detail. `--cleanup`
stops and removes every pod sandbox instead (run.sh's teardown).

The RPCs are called through grpc's generic channel.unary_unary with the
messages protoc made from runtime.proto, so no generated service stubs (and
no grpc-tools) are needed.
"""
import json
import os
import re
import subprocess
import sys
import time
import uuid

import grpc

sys.path.insert(0, os.environ.get("CRI_GEN", "."))
import runtime_pb2 as pb  # noqa: E402  (generated at test time)

ENV = os.environ
NS = "k8s.io"
TEST_IMAGE = ENV.get("CRI_TEST_IMAGE", "")
STATE = ENV.get("CRI_STATE", "")
PODS_DIR = ENV.get("CRI_PODS_DIR", "/tmp")
CGROUP_PARENT = ENV.get("CRI_CGROUP_PARENT", "/brig-cri")
BRIDGE = ENV.get("CRI_BRIDGE", "")
RUNTIMES = {
    "brig": (ENV.get("BRIG", ""), os.path.join(ENV.get("CRI_BRIG_ROOT", ""), NS)),
    "runc": (ENV.get("CRI_RUNC", ""), os.path.join(ENV.get("CRI_RUNC_ROOT", ""), NS)),
}
MARK = "brig-cri-" + uuid.uuid4().hex[:8]


class Skip(Exception):
    """The case cannot run as asked; the message says why."""


class Note(Exception):
    """The case passed with a difference worth reporting on its line."""


# ---- the CRI connection ----------------------------------------------------

class CRI:
    def __init__(self, sock):
        self.channel = grpc.insecure_channel("unix://" + sock)

    def call(self, method, deadline=120, service="RuntimeService", **fields):
        """METHOD(FIELDS...) of SERVICE; DEADLINE seconds for the call (a
        "timeout" in FIELDS is the request's own field)."""
        req = getattr(pb, method + "Request")(**fields)
        resp_cls = getattr(pb, method + "Response")
        fn = self.channel.unary_unary(
            "/runtime.v1.%s/%s" % (service, method),
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=resp_cls.FromString)
        return fn(req, timeout=deadline)


cri = None


def detail(msg):
    for line in str(msg).splitlines() or [""]:
        print("# " + line)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


# ---- pods and containers ---------------------------------------------------

class Pod:
    """A pod sandbox made through RunPodSandbox, with what we learn of it."""

    def __init__(self, handler, name, annotations=None, userns=None):
        self.handler = handler
        self.name = name
        uid = uuid.uuid4().hex
        logdir = os.path.join(PODS_DIR, "%s_%s" % (name, uid))
        os.makedirs(logdir, exist_ok=True)
        nsopts = pb.NamespaceOption(network=pb.POD, pid=pb.CONTAINER, ipc=pb.POD)
        if userns is not None:
            nsopts.userns_options.CopyFrom(userns)
        self.config = pb.PodSandboxConfig(
            metadata=pb.PodSandboxMetadata(name=name, uid=uid, namespace="brig-cri"),
            hostname=name,
            log_directory=logdir,
            labels={"brig-cri": MARK},
            annotations=annotations or {},
            linux=pb.LinuxPodSandboxConfig(
                cgroup_parent="%s/pod%s" % (CGROUP_PARENT, uid),
                security_context=pb.LinuxSandboxSecurityContext(namespace_options=nsopts)))
        self.cgroup_parent = self.config.linux.cgroup_parent
        self.id = cri.call("RunPodSandbox", config=self.config, runtime_handler=handler).pod_sandbox_id
        self.containers = {}
        st = cri.call("PodSandboxStatus", pod_sandbox_id=self.id).status
        self.ip = st.network.ip
        self.pause_pid = runtime_state(handler, self.id)["pid"]
        self.netns = os.readlink("/proc/%d/ns/net" % self.pause_pid)
        self.ipcns = os.readlink("/proc/%d/ns/ipc" % self.pause_pid)

    def container(self, name, command, memory=0, drop_caps=(), start=True):
        cfg = pb.ContainerConfig(
            metadata=pb.ContainerMetadata(name=name),
            image=pb.ImageSpec(image=TEST_IMAGE),
            command=command,
            log_path=name + ".log",
            linux=pb.LinuxContainerConfig(
                resources=pb.LinuxContainerResources(memory_limit_in_bytes=memory),
                security_context=pb.LinuxContainerSecurityContext(
                    namespace_options=pb.NamespaceOption(network=pb.POD, pid=pb.CONTAINER, ipc=pb.POD),
                    capabilities=pb.Capability(drop_capabilities=list(drop_caps)))))
        cid = cri.call("CreateContainer", pod_sandbox_id=self.id, config=cfg,
                       sandbox_config=self.config).container_id
        self.containers[name] = cid
        if start:
            cri.call("StartContainer", container_id=cid)
        return cid

    def remove(self):
        """StopPodSandbox + RemovePodSandbox, as a kubelet deletes a pod;
        returns what is left behind (an empty list when nothing is)."""
        ids = [self.id] + list(self.containers.values())
        pids = [self.pause_pid]
        for cid in self.containers.values():
            try:
                pids.append(runtime_state(self.handler, cid)["pid"])
            except Exception:
                pass
        starts = {pid: start_time(pid) for pid in pids}
        cri.call("StopPodSandbox", pod_sandbox_id=self.id)
        cri.call("RemovePodSandbox", pod_sandbox_id=self.id)
        left = []
        listed = cri.call("ListContainers", filter=pb.ContainerFilter(pod_sandbox_id=self.id)).containers
        if listed:
            left.append("ListContainers still lists %s" % [c.id for c in listed])
        pods = cri.call("ListPodSandbox", filter=pb.PodSandboxFilter(id=self.id)).items
        if pods:
            left.append("ListPodSandbox still lists the pod")
        root = RUNTIMES[self.handler][1]
        for i in ids:
            if os.path.exists(os.path.join(root, i)):
                left.append("state dir %s/%s" % (root, i))
            for d in cgroup_dirs("%s/%s" % (self.cgroup_parent, i)):
                left.append("cgroup " + d)
            if os.path.exists(os.path.join(STATE, "io.containerd.runtime.v2.task", NS, i)):
                left.append("bundle dir of " + i)
        for pid, st in starts.items():
            if st is not None and start_time(pid) == st:
                left.append("process %d still alive" % pid)
        with open("/proc/self/mountinfo") as f:
            for line in f:
                if any(i in line for i in ids) or self.netns in line:
                    left.append("mount: " + line.split()[4])
        # the pod's cgroup parent is the kubelet's to remove: it must be
        # empty now (rmdir fails on a directory with a child cgroup)
        for d in cgroup_dirs(self.cgroup_parent):
            try:
                os.rmdir(d)
            except OSError as e:
                left.append("pod cgroup %s: %s" % (d, e.strerror))
        return left


def runtime_state(handler, cid):
    """The runtime's own `state` of a container, under the shim's --root."""
    binary, root = RUNTIMES[handler]
    out = subprocess.run([binary, "--root", root, "state", cid], capture_output=True,
                         text=True, timeout=30)
    if out.returncode != 0:
        raise AssertionError("%s state %s: %s" % (handler, cid, out.stderr.strip()))
    return json.loads(out.stdout)


def start_time(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] in ("Z", "X") else fields[19]


def cgroup_dirs(path):
    """PATH in every cgroup hierarchy where it exists."""
    found = []
    base = "/sys/fs/cgroup"
    cands = [base + path]
    for e in os.listdir(base):
        cands.append(os.path.join(base, e) + path)
    for d in cands:
        if os.path.isdir(d) and d not in found:
            found.append(d)
    return found


def cgroup_file(pid, controller, name):
    """The value of NAME in PID's cgroup of the v1 CONTROLLER."""
    with open("/proc/%d/cgroup" % pid) as f:
        for line in f:
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            if controller in ctrls.split(","):
                with open("/sys/fs/cgroup/%s%s/%s" % (controller, path, name)) as v:
                    return v.read().strip()
    raise AssertionError("pid %d has no %s cgroup" % (pid, controller))


def status(cid):
    return cri.call("ContainerStatus", container_id=cid).status


def wait_state(cid, state, secs=30):
    end = time.time() + secs
    while True:
        st = status(cid)
        if st.state == state or time.time() > end:
            return st
        time.sleep(0.2)


def exec_sync(cid, cmd, timeout=30):
    r = cri.call("ExecSync", deadline=timeout + 30, container_id=cid, cmd=cmd, timeout=timeout)
    return r.exit_code, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def sh(cid, script, timeout=30):
    return exec_sync(cid, ["sh", "-c", script], timeout)


def fetch(cid, addr, path="/index.html", tries=1):
    """An HTTP GET of PATH from ADDR:8080 inside CID: (exit code, response).
    busybox nc, not wget: the static busybox's wget crashes in glibc's
    resolver when the image has no NSS libraries."""
    for _ in range(tries):
        code, out, err = sh(cid, "printf 'GET %s HTTP/1.0\\r\\n\\r\\n' | nc -w 5 %s 8080" % (path, addr))
        if code == 0 and out:
            break
        time.sleep(0.5)
    return code, out + err


# ---- the cases -------------------------------------------------------------
# Each takes the handler and a context dict shared by the cases of that
# handler (the first pod lives from the first case to the delete case).

def case_shared_namespaces(h, ctx):
    """a pod with two containers: both joined the pause container's network
    and IPC namespaces (seen from inside), a loopback socket and /dev/shm
    shared between them"""
    pod = ctx["pod"] = Pod(h, "shared-" + h)
    check(pod.ip.startswith("198.18.0."), "pod IP %r is not in the test range" % pod.ip)
    web = pod.container("web", ["sh", "-c", "echo %s-web > /www/index.html; echo via-shm > /dev/shm/%s; "
                                "exec httpd -f -p 8080 -h /www" % (MARK, MARK)], memory=128 << 20)
    # cli ends cleanly on SIGTERM, the stop signal (the delete case)
    cli = pod.container("cli", ["sh", "-c", "trap 'exit 0' TERM; while :; do sleep 0.2; done"],
                        memory=128 << 20)
    for cid in (web, cli):
        st = wait_state(cid, pb.CONTAINER_RUNNING, 10)
        check(st.state == pb.CONTAINER_RUNNING, "container %s is %s" % (st.metadata.name, st.state))
    host_net = os.readlink("/proc/self/ns/net")
    check(pod.netns != host_net, "the pause container is in the host's network namespace")
    for cid in (web, cli):
        code, out, err = sh(cid, "readlink /proc/self/ns/net; readlink /proc/self/ns/ipc")
        check(code == 0, "readlink: %s" % err)
        net, ipc = out.split()
        check(net == pod.netns, "container net ns %s, pause's %s" % (net, pod.netns))
        check(ipc == pod.ipcns, "container ipc ns %s, pause's %s" % (ipc, pod.ipcns))
    code, out = fetch(cli, "127.0.0.1", tries=20)
    check(code == 0 and MARK + "-web" in out, "cli -> web over loopback: %s" % out)
    code, out, err = sh(cli, "cat /dev/shm/" + MARK)
    check(code == 0 and out.strip() == "via-shm", "/dev/shm not shared: %s %s" % (out, err))
    code, out, err = sh(cli, "ip -4 -o addr show")
    check(pod.ip in out, "pod IP %s not in the container's addresses: %s" % (pod.ip, out))
    detail("pod %s ip %s netns %s ipc %s" % (pod.id[:12], pod.ip, pod.netns, pod.ipcns))
    listed = cri.call("ListContainers", filter=pb.ContainerFilter(pod_sandbox_id=pod.id)).containers
    names = sorted((c.metadata.name, c.state) for c in listed)
    check(names == [("cli", pb.CONTAINER_RUNNING), ("web", pb.CONTAINER_RUNNING)],
          "ListContainers: %s" % names)


def case_exec_sync(h, ctx):
    """ExecSync returns stdout, stderr and the exit code (0 and non-0)"""
    cli = need_pod(ctx).containers["cli"]
    code, out, err = sh(cli, "echo out-$((6 * 7)); echo err-$$ >&2; exit 0")
    check((code, out) == (0, "out-42\n"), "exit %d stdout %r" % (code, out))
    check(re.fullmatch(r"err-\d+\n", err), "stderr %r" % err)
    code, out, err = sh(cli, "echo before; exit 7")
    check((code, out) == (7, "before\n"), "exit %d stdout %r, wanted 7" % (code, out))
    code, out, err = exec_sync(cli, ["false"])
    check(code == 1, "false: exit %d" % code)
    # ExecSync's timeout: the call fails in time and the process is gone
    t0 = time.time()
    try:
        code, out, err = exec_sync(cli, ["sleep", "37"], timeout=2)
        got = "exit %d" % code
    except grpc.RpcError as e:
        got = e.details()
    took = time.time() - t0
    detail("ExecSync sleep 37 with timeout 2: %s after %.1fs" % (got, took))
    check(took < 20, "ExecSync with timeout 2 took %.1fs" % took)
    code, out, err = exec_sync(cli, ["ps", "-o", "args"])
    check(code == 0 and "sleep 37" not in out, "the timed-out process is still there: %s" % out)


def case_update_resources(h, ctx):
    """UpdateContainerResources reaches the container's cgroup (host file
    and inside)"""
    pod = need_pod(ctx)
    cli = pod.containers["cli"]
    pid = runtime_state(h, cli)["pid"]
    before = int(cgroup_file(pid, "memory", "memory.limit_in_bytes"))
    check(before == 128 << 20, "memory limit at create %d, wanted %d" % (before, 128 << 20))
    cri.call("UpdateContainerResources", container_id=cli,
             linux=pb.LinuxContainerResources(memory_limit_in_bytes=96 << 20, cpu_period=100000,
                                              cpu_quota=50000, cpu_shares=512))
    mem = int(cgroup_file(pid, "memory", "memory.limit_in_bytes"))
    quota = int(cgroup_file(pid, "cpu", "cpu.cfs_quota_us"))
    shares = int(cgroup_file(pid, "cpu", "cpu.shares"))
    check(mem == 96 << 20, "memory.limit_in_bytes %d after update, wanted %d" % (mem, 96 << 20))
    check(quota == 50000, "cpu.cfs_quota_us %d, wanted 50000" % quota)
    check(shares == 512, "cpu.shares %d, wanted 512" % shares)
    code, out, err = sh(cli, "cat /sys/fs/cgroup/memory/memory.limit_in_bytes")
    check(code == 0 and out.strip() == str(96 << 20), "inside: %r %r" % (out, err))


def case_stats(h, ctx):
    """ContainerStats reports non-zero memory and cpu"""
    pod = need_pod(ctx)
    web = pod.containers["web"]
    cli = pod.containers["cli"]
    sh(cli, "i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done")
    for cid in (web, cli):
        s = cri.call("ContainerStats", container_id=cid).stats
        check(s.attributes.id == cid, "stats of %s for %s" % (s.attributes.id, cid))
        cpu = s.cpu.usage_core_nano_seconds.value
        ws = s.memory.working_set_bytes.value
        detail("%s: cpu %d ns, working set %d B, usage %d B" % (
            s.attributes.metadata.name, cpu, ws, s.memory.usage_bytes.value))
        check(cpu > 0, "cpu usage 0")
        check(ws > 0, "working set 0")


def case_oom(h, ctx):
    """a container over its memory limit is OOM-killed and reported
    OOMKilled"""
    pod = need_pod(ctx)
    # dd's one 256 MiB buffer, filled from /dev/zero, is over the limit
    hog = pod.container("hog", ["dd", "if=/dev/zero", "of=/dev/null", "bs=256M", "count=1"],
                        memory=32 << 20)
    try:
        st = wait_state(hog, pb.CONTAINER_EXITED, 60)
        detail("hog: state %d exit %d reason %r" % (st.state, st.exit_code, st.reason))
        check(st.state == pb.CONTAINER_EXITED, "hog did not exit")
        check(st.reason == "OOMKilled", "reason %r, wanted OOMKilled" % st.reason)
        check(st.exit_code == 137, "exit code %d, wanted 137 (SIGKILL)" % st.exit_code)
    finally:
        cri.call("RemoveContainer", container_id=hog)
        del pod.containers["hog"]
    check(not os.path.exists(os.path.join(RUNTIMES[h][1], hog)), "state dir of hog left")


def case_ephemeral(h, ctx):
    """pod annotation run.brig.rootfs.ephemeral=true: a write to / lands in
    brig's layer, not in the bundle's rootfs (runc ignores it); the pod
    reaches another pod's address (the control for the egress case)"""
    target = need_pod(ctx)
    pod = Pod(h, "ephemeral-" + h, annotations={"run.brig.rootfs.ephemeral": "true"})
    try:
        w = pod.container("w", ["sleep", "3600"])
        code, out, err = sh(w, "echo layer > /written-by-%s && cat /written-by-%s" % (MARK, MARK))
        check((code, out) == (0, "layer\n"), "write to /: %d %r %r" % (code, out, err))
        code, out = fetch(w, target.ip, tries=10)
        check(code == 0 and MARK + "-web" in out, "pod -> pod %s: %s" % (target.ip, out))
        bundle_file = os.path.join(STATE, "io.containerd.runtime.v2.task", NS, w, "rootfs",
                                   "written-by-" + MARK)
        state = runtime_state(h, w)
        if h == "brig":
            rootfs = state.get("brig", {}).get("rootfs")
            check(rootfs and rootfs.get("mode") == "tmpfs", "brig state: brig.rootfs %r" % rootfs)
            check(not os.path.exists(bundle_file), "the write reached the bundle: %s" % bundle_file)
            detail("brig state: brig.rootfs = %s" % json.dumps(rootfs))
            check_pause_left_alone(h, pod, "rootfs")
        else:
            check(os.path.exists(bundle_file), "runc: the write is not in the bundle rootfs")
            raise Note("runc ignores run.brig.rootfs.ephemeral: the write landed in the bundle's rootfs")
    finally:
        left = pod.remove()
        check(not left, "left behind: %s" % left)


def case_egress(h, ctx):
    """pod annotation run.brig.egress=none: the container cannot connect to
    another pod's address (runc ignores it and connects)"""
    target = need_pod(ctx)
    # A pod cannot pass itself off as a pause container (which brig leaves
    # out of the policy): the handler passes through run.brig.* only.
    pod = Pod(h, "egress-" + h, annotations={"run.brig.egress": "none",
                                             "io.kubernetes.cri.container-type": "sandbox"})
    try:
        # egress needs NET_RAW dropped (brig refuses the pair otherwise);
        # containerd's default set has it
        p = pod.container("probe", ["sleep", "3600"], drop_caps=["NET_RAW"])
        t0 = time.time()
        code, out = fetch(p, target.ip)
        took = time.time() - t0
        detail("GET from %s:8080: exit %d in %.1fs: %s" % (target.ip, code, took,
                                                          (out.strip().splitlines() or [""])[0]))
        if h == "brig":
            check(code != 0 and MARK not in out, "brig: the connection to %s went through" % target.ip)
            egress = runtime_state(h, p).get("brig", {}).get("egress")
            check(egress and egress.get("mode") == "none", "brig state: brig.egress %r" % egress)
            detail("brig state: brig.egress.mode=none, enforcement %s" % egress.get("enforcement"))
            check_pause_left_alone(h, pod, "egress")
            with open(os.path.join(STATE, "io.containerd.runtime.v2.task", NS, p, "config.json")) as f:
                mark = json.load(f).get("annotations", {}).get("io.kubernetes.cri.container-type")
            check(mark == "container", "the probe's config carries container-type %r" % mark)
        else:
            check(code == 0 and MARK in out, "runc: no connection to %s (the control failed)" % target.ip)
            raise Note("runc ignores run.brig.egress: the connection to %s went through" % target.ip)
    finally:
        left = pod.remove()
        check(not left, "left behind: %s" % left)


def case_userns(h, ctx):
    """a pod with hostUsers: false (userns_options mode POD with 65536 ids
    from 100000)"""
    ids = pb.IDMapping(host_id=100000, container_id=0, length=65536)
    userns = pb.UserNamespace(mode=pb.POD, uids=[ids], gids=[ids])
    pod = Pod(h, "userns-" + h, userns=userns)
    try:
        c = pod.container("c", ["sleep", "3600"])
        code, out, err = sh(c, "cat /proc/self/uid_map")
        mapping = " ".join(out.split())
        detail("uid_map in the container: %s" % mapping)
        pause_map = open("/proc/%d/uid_map" % pod.pause_pid).read().split()
        if mapping == "0 0 4294967295":
            raise Skip("containerd %s's CRI ignores userns_options (hostUsers: false): the pod ran in the "
                       "host's user namespace (uid_map 0 0 4294967295, pause %s)" % (
                           ctx["version"], " ".join(pause_map)))
        check(mapping == "0 100000 65536", "uid_map %r" % mapping)
    finally:
        left = pod.remove()
        check(not left, "left behind: %s" % left)


def case_delete(h, ctx):
    """StopContainer, RemoveContainer, StopPodSandbox, RemovePodSandbox
    leave nothing: no runtime state dir under the shim's --root, no
    cgroup, no mount, no process, no veth on the bridge"""
    pod = need_pod(ctx)
    cli = pod.containers["cli"]
    t0 = time.time()
    cri.call("StopContainer", deadline=60, container_id=cli, timeout=20)
    st = status(cli)
    detail("cli stopped in %.1fs: exit %d reason %r" % (time.time() - t0, st.exit_code, st.reason))
    check(st.state == pb.CONTAINER_EXITED, "cli after StopContainer: state %d" % st.state)
    # the stop signal reached the container's process, which exited by itself
    check((st.exit_code, st.reason) == (0, "Completed"),
          "cli: exit %d reason %r, wanted 0 Completed (SIGTERM handled)" % (st.exit_code, st.reason))
    cri.call("RemoveContainer", container_id=cli)
    del pod.containers["cli"]
    check(not os.path.exists(os.path.join(RUNTIMES[h][1], cli)), "state dir of cli left")
    listed = [c.metadata.name for c in
              cri.call("ListContainers", filter=pb.ContainerFilter(pod_sandbox_id=pod.id)).containers]
    check(listed == ["web"], "ListContainers after RemoveContainer: %s" % listed)
    # StopPodSandbox stops web, RemovePodSandbox removes it
    ctx.pop("pod")
    left = pod.remove()
    check(not left, "left behind: %s" % "; ".join(left))
    # every pod of this handler is gone: nothing under the shim's --root
    left = os.listdir(RUNTIMES[h][1]) if os.path.isdir(RUNTIMES[h][1]) else []
    check(not left, "%s's state root still holds %s" % (h, left))
    veths = subprocess.run(["ip", "-o", "link", "show", "master", BRIDGE], capture_output=True,
                           text=True).stdout.strip()
    check(not veths, "veths left on %s: %s" % (BRIDGE, veths))


def check_pause_left_alone(h, pod, what):
    """The pod's annotations reach its pause container too; brig does not
    apply the sandbox layer there (CRI gives it a read-only root and the
    default capabilities, and it runs no tenant code)."""
    got = runtime_state(h, pod.id).get("brig", {}).get(what)
    check(got is None, "the pause container has brig.%s %r" % (what, got))


def need_pod(ctx):
    if "pod" not in ctx:
        raise Skip("the first case's pod is not there")
    return ctx["pod"]


CASES = [case_shared_namespaces, case_exec_sync, case_update_resources, case_stats, case_oom,
         case_ephemeral, case_egress, case_userns, case_delete]


def case_name(fn):
    return fn.__name__[len("case_"):].replace("_", " ")


def cleanup():
    """Stop and remove every pod sandbox (run.sh's teardown)."""
    global cri
    cri = CRI(ENV["CRI_SOCK"])
    for p in cri.call("ListPodSandbox", deadline=30).items:
        for m in ("StopPodSandbox", "RemovePodSandbox"):
            try:
                cri.call(m, deadline=60, pod_sandbox_id=p.id)
            except grpc.RpcError as e:
                print("%s %s: %s" % (m, p.id, e.details()))


def main():
    global cri
    if sys.argv[1:] == ["--cleanup"]:
        cleanup()
        return 0
    cri = CRI(ENV["CRI_SOCK"])
    only = ENV.get("CRI_CASES", "")
    v = cri.call("Version", version="v1")
    print("ok - CRI Version: %s %s, runtime API %s" % (v.runtime_name, v.runtime_version,
                                                       v.runtime_api_version))
    # the node is ready as a kubelet sees it: RuntimeReady and NetworkReady
    # (the CRI plugin loads the CNI configuration in the background)
    for _ in range(100):
        conds = {c.type: c for c in cri.call("Status").status.conditions}
        if all(c.status for c in conds.values()):
            break
        time.sleep(0.1)
    bad = ["%s: %s %s" % (t, c.reason, c.message) for t, c in conds.items() if not c.status]
    if bad or not conds:
        print("not ok - CRI Status: %s" % ("; ".join(bad) or "no conditions"))
        return 1
    print("ok - CRI Status: %s" % ", ".join(sorted(conds)))
    # the CRI plugin sees the imported images
    for img in (TEST_IMAGE, ENV.get("CRI_PAUSE_IMAGE", "")):
        for _ in range(50):
            if cri.call("ImageStatus", service="ImageService", image=pb.ImageSpec(image=img)).image.id:
                break
            time.sleep(0.2)
    failed = 0
    for h in ENV.get("CRI_HANDLERS", "brig runc").split():
        ctx = {"version": v.runtime_version}
        for fn in CASES:
            name = case_name(fn)
            if only and not re.search(only, name):
                continue
            title = "[%s] %s" % (h, name)
            t0 = time.time()
            try:
                fn(h, ctx)
                print("ok - %s (%.1fs)" % (title, time.time() - t0))
            except Skip as e:
                print("ok - %s # skip %s" % (title, e))
            except Note as e:
                print("ok - %s (%.1fs) # %s" % (title, time.time() - t0, e))
            except grpc.RpcError as e:
                failed += 1
                print("not ok - %s" % title)
                detail("%s: %s" % (e.code(), e.details()))
            except Exception as e:
                failed += 1
                print("not ok - %s" % title)
                detail("%s: %s" % (type(e).__name__, e))
        if "pod" in ctx:
            try:
                left = ctx["pod"].remove()
                if left:
                    detail("left behind by %s's first pod: %s" % (h, left))
            except Exception as e:
                detail("removing %s's first pod: %s" % (h, e))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
