"""The host side of a tool call, from the sandbox's request to the reply.

``dispatch`` runs one call or a ``parallel`` batch through approval,
validation and the tool; ``hostsupply`` supplies what the host adds to a call
(injected values, idempotency keys, two-phase binding); ``deadlines`` and
``workers`` enforce per-call timeouts; ``fanout`` bounds batch concurrency;
``idempotency`` stores replayable results; ``retention`` caps what a run keeps
of call arguments; ``messages`` turns errors into the texts a script sees.
"""
