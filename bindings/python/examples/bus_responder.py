"""A Python agent answering requests from other agents (Rust or Python) on a pqkit bus over NATS.

    python bus_responder.py URL IDENTITY-FILE KEY-SERVER-ID SUBJECT [COUNT]

It connects with its identity (``pqkit keygen --alg agent``), pinning the key server's id, subscribes to SUBJECT
and answers each request with the question in upper case, sealed, until it has answered COUNT of them. Ask it
from Rust with ``cargo run -p pqkit-bus --features nats --example nats_ask -- URL IDENTITY KEY-SERVER-ID SUBJECT hi``.
"""

import asyncio
import sys

from pqkit import bus


async def serve(url: str, identity_file: str, key_server: str, subject: str, count: int) -> None:
    me = bus.Identity.from_file(identity_file)
    async with await bus.Agent.connect(url, me, key_server=key_server) as agent:
        async with await agent.subscribe(subject) as requests:
            print("ready", flush=True)  # subscribed: requests sent from now on reach this agent
            answered = 0
            async for req in requests:
                if req.reply_to is None:
                    continue  # a plain publish, not a request
                # req.sender is authenticated: the key server vouched for the sender's key.
                await agent.reply(req, req.payload.upper())
                answered += 1
                if answered == count:
                    break


if __name__ == "__main__":
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    url, identity_file, key_server, subject = sys.argv[1:5]
    asyncio.run(serve(url, identity_file, key_server, subject, int(sys.argv[5]) if len(sys.argv) == 6 else 0))
