"""pqkit.bus: agents on a post-quantum sealed message bus over NATS, from asyncio.

The protocol is the Rust ``pqkit-bus`` NATS agent itself, run on a runtime owned by the extension module, so a
Python agent and a Rust agent (or the ``pqkit bus`` command) talk to each other through the same key server.
The NATS server sees only sealed envelopes. No GIL is held while an operation waits on the network.

    import asyncio
    from pqkit import bus

    async def main() -> None:
        me = bus.Identity.from_file("alice.agent")          # pqkit keygen --alg agent --name alice -o alice.agent
        async with await bus.Agent.connect("nats://127.0.0.1:4222", me, key_server=KEY_SERVER_ID) as agent:
            async with await agent.subscribe("orders.*") as sub:
                await agent.publish("orders.new", b"42 widgets", priority=bus.Priority.HIGH)
                async for msg in sub:
                    print(msg.subject, msg.sender, msg.payload)
                    break

Errors are exceptions, all subclasses of :class:`BusError` (itself a ``pqkit.PqkitError``):
:class:`Unauthorised` when the key server's policy refuses a publish or subscribe, :class:`NoResponders` and
:class:`Timeout` for requests, :class:`Closed` after a subscription ended, :class:`InvalidSubject`.
See docs/python.md and docs/bus.md.
"""

from __future__ import annotations

import asyncio
import enum
import os
import weakref
from types import TracebackType
from typing import Dict, Iterable, Optional, Sequence, Type, Union

from . import _pqkit
from ._pqkit import _BusClosed as Closed
from ._pqkit import _BusError as BusError
from ._pqkit import _BusInvalidSubject as InvalidSubject
from ._pqkit import _BusMessage as Message
from ._pqkit import _BusNoResponders as NoResponders
from ._pqkit import _BusTimeout as Timeout
from ._pqkit import _BusUnauthorised as Unauthorised

__all__ = [
    "Agent",
    "BusError",
    "Closed",
    "DurableSubscription",
    "Identity",
    "InvalidSubject",
    "KeyServer",
    "Message",
    "NoResponders",
    "Policy",
    "Priority",
    "Subscription",
    "Timeout",
    "Unauthorised",
]

for _t in (BusError, Unauthorised, NoResponders, Timeout, Closed, InvalidSubject):
    _t.__module__ = __name__  # tracebacks say pqkit.bus.Unauthorised

_Buffer = Union[bytes, bytearray, memoryview]
_Path = Union[str, "os.PathLike[str]"]


class Priority(enum.IntEnum):
    """A message priority, carried in the authenticated header. Higher is more urgent."""

    LOW = 0
    NORMAL = 1
    HIGH = 2
    CRITICAL = 3


class Identity:
    """An agent identity: a name and hybrid ML-DSA-65 + Ed25519 signing keys derived from a 32-byte seed.

    ``id`` (32 hex digits) is what policies and key servers name. The file format is the one of
    ``pqkit keygen --alg agent``; it holds the seed, so keep it private (mode 0600).
    """

    __slots__ = ("_inner",)

    def __init__(self, inner: _pqkit._BusIdentity) -> None:
        self._inner = inner

    @staticmethod
    def generate(name: str) -> Identity:
        """A fresh identity from the operating system's randomness."""
        return Identity(_pqkit._BusIdentity.generate(name))

    @staticmethod
    def from_seed(name: str, seed: _Buffer) -> Identity:
        """The identity for a 32-byte seed (the same name and seed give the same keys in Rust)."""
        return Identity(_pqkit._BusIdentity.from_seed(name, seed))

    @staticmethod
    def from_text(text: str) -> Identity:
        """Parses an agent identity file's text."""
        return Identity(_pqkit._BusIdentity.from_text(text))

    @staticmethod
    def from_file(path: _Path) -> Identity:
        """Reads an agent identity file (``pqkit keygen --alg agent``)."""
        with open(path, encoding="utf-8") as f:
            return Identity.from_text(f.read())

    def to_text(self) -> str:
        """The identity file's text. Secret: it holds the seed."""
        return self._inner.to_text()

    @property
    def id(self) -> str:
        return self._inner.id

    @property
    def name(self) -> str:
        return self._inner.name

    def __repr__(self) -> str:
        return repr(self._inner)


class Policy:
    """Which agent may publish on which subjects and subscribe to which patterns (``*`` and ``>`` wildcards).

    Held by the key server; an agent without a rule cannot connect. ``allow`` returns the policy, so calls chain.
    """

    __slots__ = ("_inner",)

    def __init__(self) -> None:
        self._inner = _pqkit._BusPolicy()

    @staticmethod
    def allow_all() -> Policy:
        """Every authenticated agent may publish and subscribe everywhere (tests, closed deployments)."""
        p = Policy()
        p._inner = _pqkit._BusPolicy.allow_all()
        return p

    def allow(
        self, agent: Union[str, Identity], publish: Iterable[str] = (), subscribe: Iterable[str] = ()
    ) -> Policy:
        """Grants ``agent`` (an id or an identity) publishing on ``publish`` and subscribing to ``subscribe``."""
        agent_id = agent.id if isinstance(agent, Identity) else agent
        self._inner.allow(agent_id, list(publish), list(subscribe))
        return self

    def may_publish(self, agent_id: str, subject: str) -> bool:
        return self._inner.may_publish(agent_id, subject)

    def may_subscribe(self, agent_id: str, pattern: str) -> bool:
        return self._inner.may_subscribe(agent_id, pattern)


class KeyServer:
    """A key server in this process: authenticates agents and grants topic keys by its policy.

    Agents pin its ``id``. ``pqkit bus keyserver`` is the same server as a command.
    """

    __slots__ = ("_inner",)

    def __init__(self, inner: _pqkit._BusKeyServer) -> None:
        self._inner = inner

    @staticmethod
    async def serve(
        url: str, identity: Identity, policy: Policy, state_file: Optional[Union[str, "os.PathLike[str]"]] = None
    ) -> KeyServer:
        """Starts serving on the NATS server at ``url``; returns once it listens.

        ``state_file`` keeps the topic epochs in that file (sealed to ``identity``, mode 0600, created if missing),
        so that a key server restarted with the same identity and file still opens durable messages sealed before
        the restart. A file it cannot read (another identity, damage) raises ``BusError`` naming it.
        """
        return KeyServer(await _pqkit._BusKeyServer.serve(url, identity._inner, policy._inner, state_file))

    @property
    def id(self) -> str:
        return self._inner.id

    def close(self) -> None:
        """Stops serving (idempotent)."""
        self._inner.close()

    async def __aenter__(self) -> KeyServer:
        return self

    async def __aexit__(
        self, t: Optional[Type[BaseException]], v: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        self.close()


class Subscription:
    """The messages on a pattern, in the order the server delivers them; an async iterator.

    ``recv(timeout=...)`` waits for one; a receive cancelled or timed out loses no message.
    """

    __slots__ = ("_inner", "_pending", "__weakref__")

    def __init__(self, inner: _pqkit._BusSubscription) -> None:
        self._inner = inner
        self._pending: Optional[asyncio.Future[Message]] = None

    @property
    def pattern(self) -> str:
        return self._inner.pattern

    async def recv(self, timeout: Optional[float] = None) -> Message:
        """The next message that authenticates; :class:`Timeout` after ``timeout`` seconds, :class:`Closed` once
        unsubscribed."""
        if self._pending is None:
            self._pending = asyncio.ensure_future(self._inner.recv())
        return await _take(self, timeout)

    async def unsubscribe(self) -> None:
        await self._inner.unsubscribe()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Message:
        try:
            return await self.recv()
        except Closed:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(
        self, t: Optional[Type[BaseException]], v: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        await self.unsubscribe()


class DurableSubscription:
    """A durable consumer of a JetStream stream: resumes where the consumer stopped, across restarts.

    A message is acknowledged when the next one is asked for, by :meth:`ack`, or by :meth:`close`; one not
    acknowledged is delivered again (to this consumer's next holder) after the server's ack wait.
    """

    __slots__ = ("_inner", "_pending", "__weakref__")

    def __init__(self, inner: _pqkit._BusDurableSubscription) -> None:
        self._inner = inner
        self._pending: Optional[asyncio.Future[Message]] = None

    @property
    def pattern(self) -> str:
        return self._inner.pattern

    async def recv(self, timeout: Optional[float] = None) -> Message:
        """The next message of the stream that authenticates (acknowledging the one before)."""
        if self._pending is None:
            self._pending = asyncio.ensure_future(self._inner.recv())
        return await _take(self, timeout)

    async def ack(self) -> None:
        """Acknowledges what was received so far."""
        await self._inner.ack()

    async def close(self) -> None:
        """Acknowledges what was received and stops."""
        await self._inner.close()

    def __aiter__(self) -> DurableSubscription:
        return self

    async def __anext__(self) -> Message:
        try:
            return await self.recv()
        except Closed:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> DurableSubscription:
        return self

    async def __aexit__(
        self, t: Optional[Type[BaseException]], v: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        await self.close()


async def _take(sub: Union[Subscription, DurableSubscription], timeout: Optional[float]) -> Message:
    """Waits for the receive in flight of ``sub``. It is shielded: cancelling this wait (or its timeout) leaves
    the receive running, and the next ``recv`` gets its message, so no message is lost."""
    pending = sub._pending
    assert pending is not None
    try:
        if timeout is None:
            await asyncio.shield(pending)
        else:
            await asyncio.wait_for(asyncio.shield(pending), timeout)
    except asyncio.CancelledError:
        raise  # the receive stays in flight, or its message stays, for the next recv
    except asyncio.TimeoutError:
        if not pending.done():
            raise Timeout(f"pqkit-bus: no message on {sub.pattern!r} within {timeout} s") from None
    except Exception:
        pass  # the receive's own error, raised by result() below
    sub._pending = None
    return pending.result()


class Agent:
    """An agent connected to NATS and authenticated to a key server (whose id it pins).

    Use ``async with await Agent.connect(...) as agent:`` so that :meth:`close` runs.
    """

    __slots__ = ("_inner", "_subs")

    def __init__(self, inner: _pqkit._BusAgent) -> None:
        self._inner = inner
        self._subs: weakref.WeakSet[Union[Subscription, DurableSubscription]] = weakref.WeakSet()

    @staticmethod
    async def connect(
        url: Union[str, Sequence[str]],
        identity: Identity,
        key_server: str,
        *,
        sender_auth: bool = True,
        checkpoint_every: Optional[int] = None,
        checkpoint_after: Optional[float] = None,
        sender_auth_timeout: Optional[float] = None,
        ack_wait: Optional[float] = None,
        durable_retry: Optional[float] = None,
        subscription_capacity: Optional[int] = None,
        rotate_after_messages: Optional[int] = None,
    ) -> Agent:
        """Connects to NATS at ``url`` (``nats://host:port``; a list of them, or one comma-separated string, for
        failover across a cluster) and runs the authenticated hybrid handshake with the key server whose id is
        ``key_server``. The options are those of the Rust agent (``NatsOptions``); ``None`` keeps its default:

        - ``sender_auth`` (default on): sign checkpoints over what this agent publishes, and let ``subscribe``
          deliver a message only once a checkpoint of its sender covers it. ``False`` opts out (as
          ``pqkit bus --no-sender-auth``): lower latency, but another member of a topic could forge a message in
          a publisher's name to this agent, and subscribers that keep the default drop what it publishes.
        - ``checkpoint_every`` (``N``, default 256 messages) and ``checkpoint_after`` (``T``, default 0.005 s):
          a checkpoint is signed after ``N`` messages on a topic, or ``T`` after its first unsigned one.
        - ``sender_auth_timeout`` (default 1.005 s): a message no checkpoint covers by then is dropped.
        - ``ack_wait`` (2 s): how long a durable consumer waits for an acknowledgement before redelivering.
        - ``durable_retry`` (30 s): how long ``publish_durable`` retries before it gives up.
        - ``subscription_capacity`` (65,536): messages buffered per subscription before NATS drops them.
        - ``rotate_after_messages`` (2**24): a new epoch key after this many messages under one key.
        """
        urls = url if isinstance(url, str) else ",".join(url)
        if not urls.strip(" ,"):
            raise ValueError("url: no NATS server URL given")
        return Agent(
            await _pqkit._BusAgent.connect(
                urls,
                identity._inner,
                key_server,
                sender_auth=sender_auth,
                checkpoint_every=checkpoint_every,
                checkpoint_after=checkpoint_after,
                sender_auth_timeout=sender_auth_timeout,
                ack_wait=ack_wait,
                durable_retry=durable_retry,
                subscription_capacity=subscription_capacity,
                rotate_after_messages=rotate_after_messages,
            )
        )

    @property
    def id(self) -> str:
        return self._inner.id

    @property
    def key_server(self) -> str:
        return self._inner.key_server

    async def publish(self, subject: str, payload: _Buffer, priority: Priority = Priority.NORMAL) -> None:
        """Seals ``payload`` and publishes it on ``subject``. :class:`Unauthorised` if the policy refuses."""
        await self._inner.publish(subject, payload, int(priority))

    async def subscribe(self, pattern: str) -> Subscription:
        """Subscribes to ``pattern`` (``*`` one token, ``>`` the rest). The key server is asked first:
        :class:`Unauthorised` unless the policy lets this agent subscribe to all of ``pattern``. Returns once the
        NATS server has the subscription, so what is published after that is delivered."""
        sub = Subscription(await self._inner.subscribe(pattern))
        self._subs.add(sub)
        return sub

    async def request(self, subject: str, payload: _Buffer, timeout: float = 5.0) -> Message:
        """Sends a request and waits for the first reply. :class:`NoResponders` when nobody subscribes to
        ``subject``, :class:`Timeout` when nobody answers within ``timeout`` seconds."""
        return await self._inner.request(subject, payload, float(timeout))

    async def reply(self, request: Message, payload: _Buffer) -> None:
        """Answers ``request`` (a message with ``reply_to``), sealed."""
        await self._inner.reply(request, payload)

    async def declare_durable(self, stream: str, subjects: Sequence[str]) -> None:
        """Creates (or keeps) the JetStream stream ``stream`` capturing ``subjects``."""
        await self._inner.declare_durable(stream, list(subjects))

    async def publish_durable(self, subject: str, payload: _Buffer, priority: Priority = Priority.NORMAL) -> int:
        """Publishes into the stream that captures ``subject`` and waits for the server's acknowledgement; returns
        the stream sequence."""
        return await self._inner.publish_durable(subject, payload, int(priority))

    async def subscribe_durable(
        self, stream: str, consumer: str, pattern: str, *, sender_auth: Optional[bool] = None
    ) -> DurableSubscription:
        """Reads ``stream`` through the durable consumer ``consumer`` (created if new), filtered by ``pattern``;
        :class:`Unauthorised` unless the policy lets this agent subscribe to all of ``pattern``.

        With sender authentication (``sender_auth=None`` follows the agent's ``sender_auth``, on by default;
        ``True`` asks for it on an agent that opted out) a message is delivered only once a checkpoint signed by
        its sender lists it (the checkpoints are stored in the stream with the messages), and each message is
        still acknowledged on its own. ``sender_auth=False`` delivers every message that opens, also from
        publishers that opted out, so any member of the topic could write one in another's name."""
        sub = DurableSubscription(
            await self._inner.subscribe_durable(stream, consumer, pattern, sender_auth=sender_auth)
        )
        self._subs.add(sub)
        return sub

    async def flush(self) -> None:
        """Waits until the NATS server has everything published so far."""
        await self._inner.flush()

    async def close(self) -> None:
        """Ends this agent's subscriptions (a receive waiting on one raises :class:`Closed`; durable ones
        acknowledge what was received), signs what is pending and flushes what is published, then ends the
        connection and the agent's background tasks. Afterwards every operation raises :class:`Closed`.
        Idempotent."""
        for sub in list(self._subs):
            if isinstance(sub, Subscription):
                await sub.unsubscribe()
            else:
                await sub.close()
        await self._inner.close()

    def metrics(self) -> Dict[str, int]:
        """Counters: ``published``, ``delivered``, ``rejected`` (envelopes dropped), ``rejected_unsigned`` (of
        those, messages no checkpoint of their sender covered in time) and ``duplicates``; once closed, the
        last ones."""
        return dict(self._inner.metrics())

    def __repr__(self) -> str:
        return f"<pqkit.bus.Agent id {self.id} key server {self.key_server}>"

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(
        self, t: Optional[Type[BaseException]], v: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        await self.close()
