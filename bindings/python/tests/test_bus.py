"""pqkit.bus against a real nats-server on a loopback port: a Python agent and Rust agents (the `pqkit bus`
command and the `nats_ask` example) exchange sealed messages both ways through a Rust key server, under a
policy that refuses some subjects, on core subjects, request/reply and a durable (JetStream) topic."""

import asyncio
import json
import os
import pathlib
import random
import shutil
import socket
import subprocess
import sys
import time
import warnings

import pytest

from pqkit import bus
from test_files import _cli

REPO = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "bindings" / "python" / "examples" / "bus_responder.py"


def _program(path, what, install):
    """A program from outside Python: under CI a missing one fails the test, elsewhere it warns and skips."""
    if path and os.access(path, os.X_OK):
        return path
    msg = f"{what} is needed for the pqkit.bus tests: {install}"
    if os.environ.get("CI"):
        pytest.fail(msg)
    warnings.warn(f"skipped: {msg}")
    pytest.skip(msg)


def _nats_ask():
    """The Rust requester example: $PQKIT_BUS_ASK, else its debug build in the cargo target directory."""
    tgt = os.environ.get("CARGO_TARGET_DIR") or str(REPO / "target")
    path = os.environ.get("PQKIT_BUS_ASK") or os.path.join(tgt, "debug", "examples", "nats_ask")
    return _program(path, "the nats_ask example", "cargo build -p pqkit-bus --features nats --example nats_ask")


def _free_port():
    """A loopback port free now, drawn below the kernel's ephemeral range (32768 and up), where the outgoing
    connections of the programs the tests start take their source ports."""
    for _ in range(1000):
        port = random.randrange(20000, 32000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def nats(tmp_path_factory):
    """A nats-server with JetStream on a free loopback port, stopped after the module's tests."""
    server = _program(shutil.which("nats-server") or "/usr/sbin/nats-server", "nats-server",
                      "apt-get install nats-server")
    port = _free_port()
    store = tmp_path_factory.mktemp("jetstream")
    proc = subprocess.Popen([server, "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", str(store)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"nats-server did not start on 127.0.0.1:{port}")
                time.sleep(0.05)
        yield f"nats://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _keygen(cli, path, name):
    out = subprocess.run([cli, "keygen", "--alg", "agent", "--name", name, "-o", str(path)],
                         check=True, capture_output=True, text=True).stdout
    return out.split()[-1]


@pytest.fixture(scope="module")
def deployment(nats, tmp_path_factory):
    """Identities made by `pqkit keygen --alg agent`, and `pqkit bus keyserver` serving this policy:
    the Python agent publishes on to_rust.> and dur.py.>, subscribes to to_py.>, dur.rs.> and svc.>;
    the Rust agent the other way round; the responder answers on svc.>. Nobody may use secret.>."""
    cli = _cli()
    d = tmp_path_factory.mktemp("bus")
    ids = {n: _keygen(cli, d / f"{n}.agent", n) for n in ("ks", "py", "rs", "responder")}
    (d / "policy").write_text(
        f"{ids['py']} pub to_rust.>,dur.py.>,svc.> sub to_py.>,dur.rs.>,svc.>\n"
        f"{ids['rs']} pub to_py.>,dur.rs.>,svc.> sub to_rust.>,dur.py.>\n"
        f"{ids['responder']} pub - sub svc.>\n"
    )
    ks = subprocess.Popen([cli, "bus", "keyserver", "--nats", nats, "--identity", str(d / "ks.agent"),
                           "--policy", str(d / "policy")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = ks.stdout.readline().split()
        assert first == ["keyserver", ids["ks"]], first
        assert ks.stdout.readline().strip() == "ready"
        yield {"cli": cli, "dir": d, "ids": ids, "nats": nats}
    finally:
        ks.terminate()
        ks.wait(timeout=10)


def _run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def _rust(dep, *args, **kw):
    """`pqkit bus ARGS` as the Rust agent."""
    cmd = [dep["cli"], "bus", args[0], "--nats", dep["nats"], "--identity", str(dep["dir"] / "rs.agent"),
           "--key-server", dep["ids"]["ks"], *args[1:]]
    return cmd


async def _py_agent(dep, name="py"):
    me = bus.Identity.from_file(dep["dir"] / f"{name}.agent")
    assert me.id == dep["ids"][name]
    return await bus.Agent.connect(dep["nats"], me, key_server=dep["ids"]["ks"])


async def _lines(proc, n, timeout=20):
    """The first n stdout lines of a subprocess, read without blocking the event loop."""
    out = []
    for _ in range(n):
        line = await asyncio.wait_for(proc.stdout.readline(), timeout)
        out.append(line.decode())
    return out


def test_python_and_rust_exchange_sealed_messages_both_ways(deployment):
    dep = deployment

    async def main():
        async with await _py_agent(dep) as agent:
            # Python -> Rust: `pqkit bus sub` prints what it opened, with the authenticated sender.
            sub = await asyncio.create_subprocess_exec(*_rust(dep, "sub", "--json", "--count", "2", "to_rust.>"),
                                                       stdout=asyncio.subprocess.PIPE,
                                                       stderr=asyncio.subprocess.PIPE)
            line = await asyncio.wait_for(sub.stderr.readline(), 20)
            assert line.startswith(b"subscribed"), line
            await agent.publish("to_rust.a", b"hello from python", priority=bus.Priority.HIGH)
            await agent.publish("to_rust.b", bytearray(b"\x00\xffbinary"))
            # Each topic's messages are released when their own sender checkpoint arrives, so the two subjects
            # may print in either order: compare them by subject.
            got = sorted((json.loads(x) for x in await _lines(sub, 2)), key=lambda m: m["subject"])
            assert await sub.wait() == 0
            assert got[0] == {"subject": "to_rust.a", "sender": agent.id, "priority": "High",
                              "payload": "hello from python"}
            assert got[1]["sender"] == agent.id and got[1]["priority"] == "Normal"
            assert bytes.fromhex(got[1]["payload_hex"]) == b"\x00\xffbinary"

            # Rust -> Python.
            async with await agent.subscribe("to_py.*") as inbox:
                pub = await asyncio.create_subprocess_exec(
                    *_rust(dep, "pub", "--priority", "critical", "to_py.hello", "hello from rust"))
                assert await pub.wait() == 0
                m = await inbox.recv(timeout=20)
                assert (m.subject, m.sender, m.payload, m.priority) == (
                    "to_py.hello", dep["ids"]["rs"], b"hello from rust", bus.Priority.CRITICAL)
                assert m.reply_to is None

            # The policy: what it does not grant is refused, with the subject named.
            with pytest.raises(bus.Unauthorised, match="secret.x"):
                await agent.publish("secret.x", b"no")
            with pytest.raises(bus.Unauthorised, match="secret"):
                await agent.subscribe("secret.>")
            with pytest.raises(bus.Unauthorised):
                await agent.subscribe("to_rust.>")  # publish-only for this agent
            m = agent.metrics()
            assert m["published"] == 2 and m["delivered"] >= 1

        # The Rust agent may not publish where the policy does not let it: the CLI refuses too.
        denied = subprocess.run(_rust(dep, "pub", "secret.y", "x"), capture_output=True, text=True)
        assert denied.returncode != 0 and "secret.y" in denied.stderr

    _run(main())


def test_unknown_identity_and_wrong_key_server_are_refused(deployment):
    dep = deployment

    async def main():
        stranger = bus.Identity.generate("stranger")
        with pytest.raises(bus.BusError):
            await bus.Agent.connect(dep["nats"], stranger, key_server=dep["ids"]["ks"])
        me = bus.Identity.from_file(dep["dir"] / "py.agent")
        with pytest.raises(bus.BusError):
            await bus.Agent.connect(dep["nats"], me, key_server=dep["ids"]["rs"])  # not the pinned key server
        with pytest.raises(ValueError, match="32 hex"):
            await bus.Agent.connect(dep["nats"], me, key_server="abc")

    _run(main())


def test_durable_topic_both_ways(deployment):
    dep = deployment

    async def main():
        async with await _py_agent(dep) as agent:
            # Python publishes into a stream; `pqkit bus sub --durable` reads it back later.
            await agent.declare_durable("PYDUR", ["dur.py.>"])
            seqs = [await agent.publish_durable("dur.py.n", f"durable {i}".encode()) for i in range(3)]
            assert seqs == sorted(seqs) and len(set(seqs)) == 3
            out = subprocess.run(_rust(dep, "sub", "--json", "--durable", "PYDUR", "--consumer", "rs", "--count",
                                       "3", "dur.py.>"), capture_output=True, text=True, timeout=30)
            assert out.returncode == 0, out.stderr
            got = [json.loads(x) for x in out.stdout.splitlines()]
            assert [g["payload"] for g in got] == ["durable 0", "durable 1", "durable 2"]
            assert {g["sender"] for g in got} == {agent.id}

            # `pqkit bus pub --durable` publishes before Python subscribes; the durable consumer gets it all.
            for i in range(2):
                subprocess.run(_rust(dep, "pub", "--durable", "RSDUR", "--declare", "dur.rs.>", "dur.rs.m",
                                     f"from rust {i}"), check=True, capture_output=True, timeout=30)
            sub = await agent.subscribe_durable("RSDUR", "py", "dur.rs.>")
            got = [await sub.recv(timeout=20) for _ in range(2)]
            assert [m.payload for m in got] == [b"from rust 0", b"from rust 1"]
            assert {m.sender for m in got} == {dep["ids"]["rs"]}
            await sub.close()

            # The consumer resumes where it stopped: only what came after.
            subprocess.run(_rust(dep, "pub", "--durable", "RSDUR", "dur.rs.m", "from rust 2"), check=True,
                           capture_output=True, timeout=30)
            async with await agent.subscribe_durable("RSDUR", "py", "dur.rs.>") as again:
                assert (await again.recv(timeout=20)).payload == b"from rust 2"
                with pytest.raises(bus.Timeout):
                    await again.recv(timeout=3)

            with pytest.raises(bus.Unauthorised):
                await agent.publish_durable("secret.d", b"no")

    _run(main())


def test_python_example_answers_a_rust_requester(deployment):
    """bindings/python/examples/bus_responder.py answers the Rust nats_ask example, sealed both ways."""
    dep = deployment
    ask = _nats_ask()
    responder = subprocess.Popen([sys.executable, str(EXAMPLE), dep["nats"], str(dep["dir"] / "responder.agent"),
                                  dep["ids"]["ks"], "svc.upper", "2"], stdout=subprocess.PIPE, text=True)
    try:
        assert responder.stdout.readline().strip() == "ready"
        out = subprocess.run([ask, dep["nats"], str(dep["dir"] / "rs.agent"), dep["ids"]["ks"], "svc.upper",
                              "hello", "post-quantum"], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        assert out.stdout.splitlines() == [f"{dep['ids']['responder']} HELLO", f"{dep['ids']['responder']} POST-QUANTUM"]
        assert responder.wait(timeout=20) == 0
    finally:
        if responder.poll() is None:
            responder.kill()
            responder.wait()


# Run as a program of its own: agents, a key server and a subscription left open, and 100 requests whose
# replies (timeouts from 0 to 0.2 s) are still being handed over from the bus runtime while the interpreter
# exits. A runtime that outlives the interpreter crashes such a program at exit (SIGSEGV or SIGABRT in
# about one run of four).
_LEFT_OPEN = """
import asyncio, sys
from pqkit import bus
keep = []
async def main(url):
    ks = await bus.KeyServer.serve(url, bus.Identity.generate("ks"), bus.Policy.allow_all())
    a = await bus.Agent.connect(url, bus.Identity.generate("a"), ks.id)
    b = await bus.Agent.connect(url, bus.Identity.generate("b"), ks.id)
    sub = await b.subscribe("silent.q")
    await a.publish("silent.q", b"hello")
    assert (await sub.recv(timeout=10)).payload == b"hello"
    keep.extend([ks, a, b, sub, asyncio.ensure_future(sub.recv())])
    keep.extend(a._inner.request("silent.q", b"?", i * 0.002) for i in range(100))
    print("leaving", flush=True)
asyncio.run(main(sys.argv[1]))
"""


def test_interpreter_exits_cleanly_with_the_bus_busy_and_agents_left_open(nats, tmp_path):
    """A program that forgets to close its agents, with results in flight, exits with 0 every time."""
    script = tmp_path / "left_open.py"
    script.write_text(_LEFT_OPEN)
    for run in range(20):
        p = subprocess.run([sys.executable, "-X", "faulthandler", str(script), nats], capture_output=True,
                           text=True, timeout=60)
        assert (p.returncode, p.stdout) == (0, "leaving\n"), f"run {run}: {p.returncode}\n{p.stderr}"
        assert "Fatal Python error" not in p.stderr, p.stderr


def test_python_request_reply_and_errors(deployment):
    dep = deployment

    async def main():
        async with await _py_agent(dep) as asker, await _py_agent(dep, "responder") as answerer:
            async with await answerer.subscribe("svc.sum") as requests:

                async def serve():
                    async for req in requests:
                        a, b = (int(x) for x in req.payload.split())
                        await answerer.reply(req, str(a + b).encode())

                task = asyncio.ensure_future(serve())
                reply = await asker.request("svc.sum", b"40 2", timeout=10)
                assert (reply.payload, reply.sender) == (b"42", answerer.id)
                task.cancel()
            with pytest.raises(bus.NoResponders):
                await asker.request("svc.nobody", b"?", timeout=5)
            # Subscribed but silent: a timeout.
            async with await answerer.subscribe("svc.silent") as silent:
                with pytest.raises(bus.Timeout):
                    await asker.request("svc.silent", b"?", timeout=0.5)
                m = await silent.recv(timeout=5)
                assert m.reply_to is not None and m.sender == asker.id
                with pytest.raises(ValueError, match="not a request"):
                    await answerer.reply(await _published(asker, silent), b"x")

    async def _published(agent, sub):
        await agent.publish("svc.silent", b"plain")
        return await sub.recv(timeout=5)

    _run(main())


def test_in_process_key_server_and_no_message_lost_to_a_timeout(nats):
    """A key server run from Python, a policy built in Python, and a receive that times out (or is
    cancelled) before the message arrives: the next receive still gets it."""

    async def main():
        ks_id, a_id, b_id = bus.Identity.generate("ks"), bus.Identity.generate("a"), bus.Identity.generate("b")
        policy = bus.Policy().allow(a_id, publish=["t.>"]).allow(b_id.id, subscribe=["t.*"])
        assert policy.may_publish(a_id.id, "t.x") and not policy.may_publish(b_id.id, "t.x")
        assert policy.may_subscribe(b_id.id, "t.*") and not policy.may_subscribe(b_id.id, "t.>")
        with pytest.raises(bus.InvalidSubject):
            bus.Policy().allow(a_id, publish=["bad..subject"])
        async with await bus.KeyServer.serve(nats, ks_id, policy) as ks:
            assert ks.id == ks_id.id
            async with await bus.Agent.connect(nats, a_id, ks.id) as a, await bus.Agent.connect(nats, b_id, ks.id) as b:
                sub = await b.subscribe("t.*")
                with pytest.raises(bus.Timeout):
                    await sub.recv(timeout=0.2)
                waiter = asyncio.ensure_future(sub.recv())
                await asyncio.sleep(0.1)
                waiter.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await waiter
                for i in range(3):
                    await a.publish("t.x", f"m{i}".encode(), priority=bus.Priority.LOW)
                got = []
                async for m in sub:
                    got.append((m.payload, m.priority, m.sender))
                    if len(got) == 3:
                        break
                assert got == [(f"m{i}".encode(), bus.Priority.LOW, a.id) for i in range(3)]
                with pytest.raises(bus.Unauthorised):
                    await b.publish("t.x", b"b may only read")
                with pytest.raises(bus.InvalidSubject):
                    await a.publish("t..x", b"")
                with pytest.raises(ValueError, match="priority"):
                    await a.publish("t.x", b"", priority=7)  # type: ignore[arg-type]
                await sub.unsubscribe()
                with pytest.raises(bus.Closed):
                    await sub.recv(timeout=1)
                assert [m async for m in sub] == []
                # Closing the agent ends its subscriptions: a receive waiting on one raises Closed.
                other = await b.subscribe("t.y")
                waiting = asyncio.ensure_future(other.recv())
                await asyncio.sleep(0.1)
                await b.close()
                with pytest.raises(bus.Closed):
                    await asyncio.wait_for(waiting, 10)

    _run(main())


def test_identity_text_and_secrets_hidden(tmp_path):
    cli = _cli()
    rs_id = _keygen(cli, tmp_path / "x.agent", "x")
    ident = bus.Identity.from_file(tmp_path / "x.agent")
    assert (ident.id, ident.name) == (rs_id, "x")
    # Written by Python, read by the CLI: the same id.
    mine = bus.Identity.generate("mine")
    (tmp_path / "mine.agent").write_text(mine.to_text())
    os.chmod(tmp_path / "mine.agent", 0o600)
    out = subprocess.run([cli, "pubkey", str(tmp_path / "mine.agent")], check=True, capture_output=True, text=True)
    assert mine.id in out.stdout
    assert bus.Identity.from_seed("mine", bytes(32)).id == bus.Identity.from_seed("mine", bytearray(32)).id
    assert bus.Identity.from_seed("a", bytes(32)).id != bus.Identity.from_seed("a", b"\x01" + bytes(31)).id
    seed_hex = mine.to_text().split("seed ")[1].strip()
    assert seed_hex not in repr(mine) and mine.id in repr(mine)
    for bad in ("", "pqkit-bus agent v1\nname x\nseed 00\n", "hello\nname x\nseed " + "00" * 32 + "\n"):
        with pytest.raises(Exception, match="identity"):
            bus.Identity.from_text(bad)
    with pytest.raises(Exception, match="32 bytes"):
        bus.Identity.from_seed("a", bytes(31))


def test_docs_bus_example_runs(nats, monkeypatch, capsys):
    """The `python bus` block of docs/python.md, against the test's server."""
    import re

    blocks = re.findall(r"```python bus\n(.*?)```", (REPO / "docs" / "python.md").read_text(), re.S)
    assert len(blocks) == 1
    monkeypatch.setenv("NATS_URL", nats)
    exec(compile(blocks[0], "docs/python.md bus block", "exec"), {"__name__": "__main__"})
    assert "refused:" in capsys.readouterr().out


def test_sender_auth_opt_out_python_and_rust_both_ways(deployment):
    """An opted-out publisher signs no checkpoints: an opted-out subscriber (Python or `pqkit bus sub
    --no-sender-auth`) gets its messages, a default subscriber drops them as unsigned, as Rust agents do."""
    dep = deployment

    async def main():
        rs_id = bus.Identity.from_file(dep["dir"] / "rs.agent")
        async with await _py_agent_with(dep, "py", sender_auth=False) as py_out, \
                await bus.Agent.connect(dep["nats"], rs_id, dep["ids"]["ks"], sender_auth=False) as rs_out, \
                await bus.Agent.connect(dep["nats"], rs_id, dep["ids"]["ks"], sender_auth_timeout=0.5) as rs_def:
            # Python (opted out) -> the CLI opted out.
            sub = await asyncio.create_subprocess_exec(
                *_rust(dep, "sub", "--json", "--no-sender-auth", "--count", "1", "to_rust.>"),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            assert (await asyncio.wait_for(sub.stderr.readline(), 20)).startswith(b"subscribed")
            out_sub = await rs_out.subscribe("to_rust.>")
            def_sub = await rs_def.subscribe("to_rust.>")
            await py_out.publish("to_rust.plain", b"unsigned from python")
            got = json.loads((await _lines(sub, 1))[0])
            assert await sub.wait() == 0
            assert (got["subject"], got["sender"], got["payload"]) == ("to_rust.plain", py_out.id,
                                                                       "unsigned from python")
            m = await out_sub.recv(timeout=10)
            assert (m.payload, m.sender) == (b"unsigned from python", py_out.id)
            # A default subscriber waits for a checkpoint that never comes, then drops the message.
            with pytest.raises(bus.Timeout):
                await def_sub.recv(timeout=2)
            assert rs_def.metrics()["rejected_unsigned"] == 1
            assert py_out.metrics()["checkpoints"] == 0

        # The CLI opted out -> Python: delivered to an opted-out subscriber, dropped by a default one.
        async with await _py_agent_with(dep, "py", sender_auth=False) as out, \
                await _py_agent_with(dep, "py", sender_auth_timeout=0.5) as default:
            out_sub, def_sub = await out.subscribe("to_py.*"), await default.subscribe("to_py.*")
            pub = await asyncio.create_subprocess_exec(*_rust(dep, "pub", "--no-sender-auth", "to_py.plain", "x"))
            assert await pub.wait() == 0
            assert (await out_sub.recv(timeout=10)).payload == b"x"
            with pytest.raises(bus.Timeout):
                await def_sub.recv(timeout=2)
            assert default.metrics()["rejected_unsigned"] == 1
            # ... and the CLI with its default delivers to both.
            pub = await asyncio.create_subprocess_exec(*_rust(dep, "pub", "to_py.signed", "y"))
            assert await pub.wait() == 0
            assert (await out_sub.recv(timeout=10)).payload == b"y"
            assert (await def_sub.recv(timeout=10)).payload == b"y"

    _run(main())


async def _py_agent_with(dep, name, **options):
    me = bus.Identity.from_file(dep["dir"] / f"{name}.agent")
    return await bus.Agent.connect(dep["nats"], me, dep["ids"]["ks"], **options)


def test_checkpoint_rule_and_key_rotation_options(nats):
    async def main():
        ks_id, a_id, b_id = bus.Identity.generate("ks"), bus.Identity.generate("a"), bus.Identity.generate("b")
        async with await bus.KeyServer.serve(nats, ks_id, bus.Policy.allow_all()) as ks:
            # N = 2 messages, T = 30 s: a checkpoint after every second message, none for a lone one until close.
            async with await bus.Agent.connect(nats, a_id, ks.id, checkpoint_every=2, checkpoint_after=30,
                                               rotate_after_messages=2) as a, \
                    await bus.Agent.connect(nats, b_id, ks.id, sender_auth_timeout=10) as b:
                sub = await b.subscribe("cp.t")
                for i in range(2):
                    await a.publish("cp.t", f"m{i}".encode())
                await asyncio.sleep(0.3)
                assert a.metrics()["checkpoints"] == 1
                got = [await sub.recv(timeout=10) for _ in range(2)]
                await a.publish("cp.t", b"m2")
                await asyncio.sleep(0.3)
                assert a.metrics()["checkpoints"] == 1  # T = 30 s: nothing signed yet
                with pytest.raises(bus.Timeout):
                    await sub.recv(timeout=0.3)  # held until its checkpoint
                await a.close()  # signs the pending batch
                assert a.metrics()["checkpoints"] == 2
                got.append(await sub.recv(timeout=10))
                assert [m.payload for m in got] == [b"m0", b"m1", b"m2"]
                # A new sender key every 2 messages: the message counter restarts in each epoch.
                assert [m.seq & ((1 << 40) - 1) for m in got] == [0, 1, 0]
                with pytest.raises(bus.Closed):
                    await a.publish("cp.t", b"after close")

    _run(main())


def test_server_list_durable_retry_and_option_errors(deployment):
    dep = deployment

    async def main():
        dead = f"nats://127.0.0.1:{_free_port()}"
        me = bus.Identity.from_file(dep["dir"] / "py.agent")
        for url in ([dead, dep["nats"]], f"{dead},{dep['nats']}"):
            async with await bus.Agent.connect(url, me, dep["ids"]["ks"]) as agent:
                await agent.flush()
        # No stream captures to_rust.>: the durable publish is retried for durable_retry, then fails.
        async with await _py_agent_with(dep, "py", durable_retry=0.5) as agent:
            t = time.monotonic()
            with pytest.raises(bus.BusError):
                await agent.publish_durable("to_rust.nostream", b"x")
            assert time.monotonic() - t < 10  # the default retries for 30 s
        for bad, word in [(dict(checkpoint_every=0), "checkpoint_every"),
                          (dict(sender_auth=False, checkpoint_every=4), "sender_auth"),
                          (dict(checkpoint_after=-1.0), "checkpoint_after"),
                          (dict(sender_auth_timeout=0.0), "sender_auth_timeout"),
                          (dict(ack_wait=float("nan")), "ack_wait"),
                          (dict(durable_retry=-2.0), "durable_retry"),
                          (dict(subscription_capacity=0), "subscription_capacity"),
                          (dict(rotate_after_messages=0), "rotate_after_messages"),
                          (dict(rotate_after_messages=(1 << 39) + 1), "rotate_after_messages")]:
            with pytest.raises(ValueError, match=word):
                await bus.Agent.connect(dep["nats"], me, dep["ids"]["ks"], **bad)
        with pytest.raises(ValueError, match="url"):
            await bus.Agent.connect([], me, dep["ids"]["ks"])

    _run(main())


def test_durable_subscription_with_sender_auth(deployment):
    """`subscribe_durable` with sender authentication (asked for, or the agent's default): what the CLI publishes
    with its default (checkpoints stored in the stream) is delivered, what it publishes opted out is not;
    `sender_auth=False` delivers both."""
    dep = deployment

    async def main():
        for i, opt in enumerate([(), ("--no-sender-auth",)]):
            subprocess.run(_rust(dep, "pub", "--durable", "RSDUR", "--declare", "dur.rs.>", *opt,
                                 "dur.rs.auth.m", f"m{i}"), check=True, capture_output=True, timeout=30)
        async with await _py_agent_with(dep, "py", sender_auth_timeout=0.5) as agent:
            async with await agent.subscribe_durable("RSDUR", "py-auth", "dur.rs.auth.>", sender_auth=True) as s:
                m = await s.recv(timeout=20)
                assert (m.payload, m.sender) == (b"m0", dep["ids"]["rs"])
                with pytest.raises(bus.Timeout):
                    await s.recv(timeout=3)
            assert agent.metrics()["rejected_unsigned"] == 1
            # The agent's default is the same as sender_auth=True.
            async with await agent.subscribe_durable("RSDUR", "py-default", "dur.rs.auth.>") as s:
                assert (await s.recv(timeout=20)).payload == b"m0"
                with pytest.raises(bus.Timeout):
                    await s.recv(timeout=3)
            # Without sender authentication the same stream gives both.
            async with await agent.subscribe_durable("RSDUR", "py-plain", "dur.rs.auth.>", sender_auth=False) as s:
                assert [(await s.recv(timeout=20)).payload for _ in range(2)] == [b"m0", b"m1"]

    _run(main())


def test_close_ends_the_agents_connection(tmp_path):
    """After `close` the NATS server no longer has the agent's connection (its monitoring endpoint lists the
    connections by name), and the agent's operations raise Closed."""
    import urllib.request

    server = _program(shutil.which("nats-server") or "/usr/sbin/nats-server", "nats-server",
                      "apt-get install nats-server")
    port, mon = _free_port(), _free_port()
    proc = subprocess.Popen([server, "-a", "127.0.0.1", "-p", str(port), "-m", str(mon)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def names():
        with urllib.request.urlopen(f"http://127.0.0.1:{mon}/connz", timeout=5) as r:
            return {c.get("name", "") for c in json.load(r)["connections"]}

    async def main():
        url = f"nats://127.0.0.1:{port}"
        deadline = time.monotonic() + 15
        while True:
            try:
                names()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.05)
        async with await bus.KeyServer.serve(url, bus.Identity.generate("ks"), bus.Policy.allow_all()) as ks:
            agent = await bus.Agent.connect(url, bus.Identity.generate("a"), ks.id)
            sub = await agent.subscribe("t.x")
            await agent.publish("t.x", b"m")
            assert (await sub.recv(timeout=10)).payload == b"m"
            mine = f"pqkit-bus agent {agent.id}"
            assert mine in names()
            await agent.close()
            end = time.monotonic() + 5
            while mine in names():
                assert time.monotonic() < end, "the agent's connection is still open 5 s after close"
                await asyncio.sleep(0.05)
            for op in (agent.publish("t.x", b""), agent.subscribe("t.y"), agent.flush()):
                with pytest.raises(bus.Closed):
                    await op
            assert agent.metrics()["published"] == 1
            await agent.close()  # idempotent

    try:
        _run(main())
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_bus_calls_after_the_runtime_stopped_raise_closed(nats, tmp_path):
    """The interpreter-exit function stops the runtime for good: a bus call afterwards raises Closed."""
    script = tmp_path / "after_stop.py"
    script.write_text(
        "import asyncio, sys\n"
        "from pqkit import bus, _pqkit\n"
        "async def main(url):\n"
        "    ks = await bus.KeyServer.serve(url, bus.Identity.generate('ks'), bus.Policy.allow_all())\n"
        "    _pqkit._bus_shutdown()\n"
        "    try:\n"
        "        await bus.Agent.connect(url, bus.Identity.generate('a'), ks.id)\n"
        "    except bus.Closed as e:\n"
        "        print('closed:', e)\n"
        "asyncio.run(main(sys.argv[1]))\n")
    p = subprocess.run([sys.executable, str(script), nats], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("closed: pqkit.bus: the interpreter is exiting"), p.stdout


def test_key_server_state_file_keeps_the_durable_backlog_across_a_restart(nats, tmp_path):
    state = tmp_path / "ks.state"

    async def main():
        ks_id, a_id, b_id = bus.Identity.generate("ks"), bus.Identity.generate("a"), bus.Identity.generate("b")
        ks = await bus.KeyServer.serve(nats, ks_id, bus.Policy.allow_all(), state_file=state)
        assert state.exists() and (state.stat().st_mode & 0o777) == 0o600
        async with await bus.Agent.connect(nats, a_id, ks.id) as a:
            await a.declare_durable("PYKS", ["pyks.>"])
            async with await bus.Agent.connect(nats, b_id, ks.id) as b:
                await (await b.subscribe_durable("PYKS", "b", "pyks.t")).close()
            for i in range(5):
                await a.publish_durable("pyks.t", f"m{i}".encode())
        # The key server restarts before b reads: with the same file, the backlog still opens.
        ks.close()
        ks = await bus.KeyServer.serve(nats, ks_id, bus.Policy.allow_all(), state_file=str(state))
        async with await bus.Agent.connect(nats, b_id, ks.id) as b:
            sub = await b.subscribe_durable("PYKS", "b", "pyks.t")
            got = [(await sub.recv(timeout=10)).payload for _ in range(5)]
            assert got == [f"m{i}".encode() for i in range(5)]
            await sub.close()
        ks.close()
        # Another identity cannot use the file.
        with pytest.raises(bus.BusError, match="ks.state"):
            await bus.KeyServer.serve(nats, bus.Identity.generate("other"), bus.Policy.allow_all(), state_file=state)

    _run(main())
